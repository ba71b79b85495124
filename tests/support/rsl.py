"""Shared helpers of the rsl_rl tests: a seed feed, the demo checkpoint, tiny envs (Gymnasium and VecEnv)."""

from __future__ import annotations

import math
import os
import threading
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from tui_eval.envs.point_goal import PointGoalEnv

ROOT = Path(__file__).resolve().parents[2]
DEMO_DIR = ROOT / "assets" / "rsl_pointgoal"


def demo_checkpoint() -> Path:
    found = sorted(DEMO_DIR.glob("model_*.pt"))
    assert found, "assets/rsl_pointgoal holds no model_*.pt: run python assets/make_rsl_demo.py"
    return found[-1]


class ListFeed:
    """A SeedFeed over a fixed list of seeds (block 0); `cancel_after` cancels once that many were taken."""

    heartbeat = None

    def __init__(self, seeds, cancel_after: int | None = None):
        self.seeds = list(seeds)
        self.taken: list[int] = []
        self.cancel_after = cancel_after
        self._lock = threading.Lock()

    def take(self):
        with self._lock:
            if not self.seeds or self.cancelled:
                return None
            seed = self.seeds.pop(0)
            self.taken.append(seed)
            return seed, 0

    @property
    def cancelled(self) -> bool:
        return self.cancel_after is not None and len(self.taken) >= self.cancel_after


def run_path(path, seeds, **feed_kwargs):
    records = []
    path.run(ListFeed(seeds, **feed_kwargs), records.append)
    return records


# ------------------------------------------------------------------ a Gymnasium world that blows up


class NanPointGoalEnv(PointGoalEnv):
    """PointGoal whose episodes with an even seed return a NaN observation at step 3."""

    def reset(self, *, seed=None, options=None):
        self._poison = seed is not None and seed % 2 == 0
        self._t = 0
        return super().reset(seed=seed, options=options)

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        self._t += 1
        if self._poison and self._t == 3:
            obs = obs.copy()
            obs[0] = np.nan
        return obs, reward, terminated, truncated, info


if "NanPointGoal-v0" not in gym.registry:
    gym.register("NanPointGoal-v0", entry_point=NanPointGoalEnv, max_episode_steps=100)


# ------------------------------------------------------------------ a tiny rsl_rl VecEnv (for --vecenv)


_STEPS_TOWARDS_RAISE: dict[int, int] = {}


class TorchPointGoal(VecEnv):
    """PointGoal for N worlds in torch: it resets its own worlds, as Isaac Lab's envs do.

    Seeded by `seed` (a torch Generator), so two instances with the same seed and the same actions run
    the same episodes. `nan_world`: that world returns a NaN reward at its 3rd step of every episode.
    `raise_at`: `step` raises once, at the `raise_at`-th step taken by the instances made with that value in
    this process (tui-eval makes a new instance per batch seed).
    """

    def __init__(self, num_envs: int, device: str = "cpu", seed: int = 0, nan_world: int | None = None,
                 raise_at: int | None = None, max_steps: int = 100):
        self.num_envs = num_envs
        self.num_actions = 2
        self.max_episode_length = max_steps
        self.device = device
        self.cfg = {"name": "TorchPointGoal"}
        self.gen = torch.Generator().manual_seed(seed)
        self.nan_world = nan_world
        self.raise_at = raise_at
        self.t = 0
        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long)
        self.pos = torch.zeros(num_envs, 2, dtype=torch.float64)
        self.goal = torch.zeros(num_envs, 2, dtype=torch.float64)
        self._reset(torch.ones(num_envs, dtype=torch.bool))

    def _reset(self, which: torch.Tensor) -> None:
        k = int(which.sum())
        if k:
            self.pos[which] = torch.rand(k, 2, generator=self.gen, dtype=torch.float64)
            self.goal[which] = torch.rand(k, 2, generator=self.gen, dtype=torch.float64)
            self.episode_length_buf[which] = 0

    def get_observations(self) -> TensorDict:
        obs = torch.cat([self.pos, self.goal], dim=1).float()
        return TensorDict({"policy": obs}, batch_size=[self.num_envs])

    def step(self, actions: torch.Tensor):
        self.t += 1
        if self.raise_at is not None:
            _STEPS_TOWARDS_RAISE[self.raise_at] = _STEPS_TOWARDS_RAISE.get(self.raise_at, 0) + 1
            if _STEPS_TOWARDS_RAISE[self.raise_at] == self.raise_at:
                raise RuntimeError("simulated physics failure")
        move = actions.clamp(-1.0, 1.0).double() * 0.05
        self.pos = (self.pos + move).clamp(0.0, 1.0)
        self.episode_length_buf += 1
        distance = torch.linalg.norm(self.pos - self.goal, dim=1)
        success = distance < 0.08
        reward = (-distance + 10.0 * success).float()
        if self.nan_world is not None and int(self.episode_length_buf[self.nan_world]) == 3:
            reward[self.nan_world] = math.nan
        time_outs = (self.episode_length_buf >= self.max_episode_length) & ~success
        dones = success | time_outs
        self._reset(dones)
        extras = {"time_outs": time_outs, "is_success": success}
        return self.get_observations(), reward, dones, extras


def make_vecenv(num_envs: int, device: str, seed: int, env_config: dict) -> TorchPointGoal:
    """The `--vecenv tests.rsl_helpers:make_vecenv` factory (declares only what it uses)."""
    return TorchPointGoal(num_envs, device=device, seed=seed, **env_config)


#: held while an instance of GlobalTorchPointGoal steps: a second thread finding it held is refused
_SIMULATOR_IN_USE = threading.Lock()


BATCH_LOG_VARIABLE = "TUI_EVAL_TEST_BATCH_LOG"  # a file GlobalTorchPointGoal appends its pid to at every reset


class GlobalTorchPointGoal(TorchPointGoal):
    """A batched simulator as mjlab's and Isaac Lab's are: worlds reset from torch's *global* generator (what
    anything else in the process draws from it shifts the episodes), `reset()` restarts every world, no `seed`
    of its own, and it refuses to be entered by a second thread while one steps it (MuJoCo-Warp crashes)."""

    def __init__(self, num_envs: int, device: str = "cpu", max_steps: int = 100):
        super().__init__(num_envs, device=device, max_steps=max_steps)

    def _reset(self, which: torch.Tensor) -> None:
        k = int(which.sum())
        if k:
            self.pos[which] = torch.rand(k, 2, dtype=torch.float64)
            self.goal[which] = torch.rand(k, 2, dtype=torch.float64)
            self.episode_length_buf[which] = 0

    def reset(self):
        self._reset(torch.ones(self.num_envs, dtype=torch.bool))
        if os.environ.get(BATCH_LOG_VARIABLE):  # a batch starts: said where a test reads it, whichever process
            with open(os.environ[BATCH_LOG_VARIABLE], "a") as fh:
                fh.write(f"{os.getpid()}\n")
        return self.get_observations(), {}

    def step(self, actions: torch.Tensor):
        if not _SIMULATOR_IN_USE.acquire(blocking=False):
            raise RuntimeError("a second thread entered the simulator while another stepped it")
        try:
            return super().step(actions)
        finally:
            _SIMULATOR_IN_USE.release()


def make_global_vecenv(num_envs: int, device: str) -> GlobalTorchPointGoal:
    """`--vecenv tests.support.rsl:make_global_vecenv`: takes no seed, as many users' factories."""
    return GlobalTorchPointGoal(num_envs, device=device)


class SeedlessPointGoal(TorchPointGoal):
    """Ignores every seed, as a factory with a seed baked into its cfg does: `reset()` restarts its own generator
    from 0, so every batch starts its worlds where the last one did."""

    def reset(self):
        self.gen = torch.Generator().manual_seed(0)
        self._reset(torch.ones(self.num_envs, dtype=torch.bool))
        return self.get_observations(), {}


def make_seedless_vecenv(num_envs: int, device: str) -> SeedlessPointGoal:
    return SeedlessPointGoal(num_envs, device=device)
