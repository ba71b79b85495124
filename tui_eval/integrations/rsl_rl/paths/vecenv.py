"""rsl_rl `VecEnv`s that know which held-out seed each world's episode belongs to.

Two ways in, one interface out (`EvalVecEnv`: an rsl_rl `VecEnv` plus per-world episode labels):

**A registered Gymnasium env** (`GymVecEnv`, from `--env ID` / `--env-config JSON` or the checkpoint's
cfg): `num_envs` sub-envs, each a `GuardedEnv` (tui_eval/envs/guard.py) that takes its reset seed from the
run's seed feed. A world runs one full episode per seed: when its episode ends inside `step`, it is
reset at once with the next seed (rsl_rl's convention: the observation returned for a done world is
the first one of its next episode), so no 0-reward dummy step is ever counted (Gymnasium's own vector
envs default to NEXT_STEP autoreset). A world whose feed hands out nothing goes idle: it is not
stepped again until the next `begin` and produces no records. Observations come out as a TensorDict
with one group, `"policy"` (or one group per key of a `Dict` observation space);
`extras["time_outs"]` marks truncation; rewards are float32, as rsl_rl expects. A broken world (NaN,
exception, slow step) ends as an invalid episode, decided by `GuardedEnv`.

A user's factory (`--vecenv module:function`) is the other way in: see `factory_env.FactoryVecEnv`.
Both implement `eval_env.EvalVecEnv`.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from tensordict import TensorDict

from tui_eval.envs.guard import (
    BLOCK_KEY,
    INVALID_KEY,
    SEED_KEY,
    SUCCESS_KEY,
    GuardedEnv,
    check_env_id,
    import_registrations,
    start_fingerprint,
)
from tui_eval.errors import BadInput, first_line
from tui_eval.feed import FeedRelay, SeedFeed
from tui_eval.integrations.rsl_rl.paths.eval_env import IDLE, LIVE, EpisodeEnd, EvalVecEnv, group_layout
from tui_eval.integrations.rsl_rl.paths.factory_env import FactoryVecEnv, resolve_factory
from tui_eval.paths.native_output import native_stdout_quiet


class GymVecEnv(EvalVecEnv):
    """`num_envs` GuardedEnv worlds of a registered Gymnasium env, stepped in turn, as an rsl_rl VecEnv."""

    def __init__(self, env_id: str, env_config: dict[str, Any] | None = None, num_envs: int = 8,
                 device: str = "cpu", success_key: str | None = None, step_timeout: float | None = None,
                 clip_actions: float | None = None, images: bool = False):
        import_registrations()
        with native_stdout_quiet():
            check_env_id(env_id)
        self.env_id = env_id
        self.env_config = dict(env_config or {})
        self.num_envs = int(num_envs)
        self.device = torch.device(device)
        self.clip_actions = clip_actions
        self._relay = FeedRelay()
        try:
            with native_stdout_quiet():  # PyBullet prints its options on connect, from C
                raw = [gym.make(env_id, **self.env_config) for _ in range(self.num_envs)]
        except BadInput:
            raise
        except Exception as exc:  # an env's constructor may raise anything
            raise BadInput(f"cannot make env {env_id!r} with --env-config {self.env_config}: "
                           f"{first_line(exc)}") from None
        self.envs = [GuardedEnv(e, feed=self._relay, success_key=success_key, step_timeout=step_timeout)
                     for e in raw]
        action_space = self.envs[0].action_space
        if not isinstance(action_space, gym.spaces.Box):
            self.close()
            raise BadInput(f"env {env_id!r} has a {type(action_space).__name__} action space; rsl_rl policies "
                           "output continuous actions: pass an env with a Box action space")
        self.action_shape = action_space.shape
        self.num_actions = int(np.prod(action_space.shape))
        self.groups = group_layout(self.envs[0].observation_space, images=images)
        spec_steps = self.envs[0].spec.max_episode_steps if self.envs[0].spec is not None else None
        self.max_episode_length = int(spec_steps) if spec_steps else 10**9
        self.cfg = {"env_id": env_id, "env_config": self.env_config}
        self._obs = {g: np.zeros((self.num_envs, *shape), dtype=np.float32) for g, _, shape in self.groups}
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._t0 = np.zeros(self.num_envs)
        self.state = np.full(self.num_envs, IDLE, dtype=np.int8)
        self._start: list[str | None] = [None] * self.num_envs
        self.finished = []
        self.description = f"{self.num_envs} × {env_id}" + (f" {self.env_config}" if self.env_config else "")

    # -- rsl_rl VecEnv API
    @property
    def episode_length_buf(self) -> torch.Tensor:
        return torch.from_numpy(self._steps)

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self._steps[:] = np.asarray(value.detach().cpu(), dtype=np.int64)

    def get_observations(self) -> TensorDict:
        return TensorDict({g: torch.from_numpy(b.copy()).to(self.device) for g, b in self._obs.items()},
                          batch_size=[self.num_envs], device=self.device)

    def _write_obs(self, i: int, ob: Any) -> None:
        for group, key, _ in self.groups:
            value = ob if key is None else ob[key]
            target = self._obs[group]
            target[i] = np.asarray(value, dtype=np.float32).reshape(target.shape[1:])

    def begin(self, feed: SeedFeed) -> TensorDict:
        """Reset every world with the next seed from `feed` (worlds that get none stay idle)."""
        self._relay.feed = feed
        self.finished = []
        now = time.perf_counter()
        for i, env in enumerate(self.envs):
            ob, _ = env.reset()
            self.state[i] = IDLE if env.idle else LIVE
            self._write_obs(i, ob)
            self._start[i] = start_fingerprint(ob)
            self._steps[i] = 0
            self._t0[i] = now
        return self.get_observations()

    def end(self) -> None:
        self._relay.feed = None

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        acts = actions.detach().to("cpu", torch.float32).numpy().reshape((self.num_envs, *self.action_shape))
        if self.clip_actions is not None:
            acts = np.clip(acts, -self.clip_actions, self.clip_actions)
        n = self.num_envs
        rew = np.zeros(n, dtype=np.float32)
        dones = np.zeros(n, dtype=bool)
        time_outs = np.zeros(n, dtype=bool)
        finished: list[EpisodeEnd] = []
        state, envs = self.state, self.envs
        for i in np.flatnonzero(state == LIVE).tolist():
            env = envs[i]
            ob, r, terminated, truncated, info = env.step(acts[i])
            rew[i] = r
            if terminated or truncated:
                dones[i] = True
                time_outs[i] = truncated and not terminated
                now = time.perf_counter()
                finished.append(EpisodeEnd(i, int(info[SEED_KEY]), int(info[BLOCK_KEY]), info.get(SUCCESS_KEY),
                                           info.get(INVALID_KEY), now - self._t0[i], self._start[i]))
                ob, _ = env.reset()  # the next seed, or idle
                self._start[i] = start_fingerprint(ob)
                self._steps[i] = 0
                self._t0[i] = now
                if env.idle:
                    state[i] = IDLE
            else:
                self._steps[i] += 1
            self._write_obs(i, ob)
        self.finished = finished
        extras = {"time_outs": torch.from_numpy(time_outs).to(self.device)}
        return (self.get_observations(), torch.from_numpy(rew).to(self.device),
                torch.from_numpy(dones).to(self.device), extras)

    def close(self) -> None:
        for env in self.envs:
            try:
                env.close()
            except Exception:  # closing is best effort: the run is over
                pass



def make_eval_vecenv(*, env_id: str | None, env_config: dict[str, Any], num_envs: int, device: str,
                     success_key: str | None, step_timeout: float | None, vecenv: str | None = None,
                     seed: int = 0, agent_cfg: dict[str, Any] | None = None) -> EvalVecEnv:
    """The env a path steps: the user's factory if `vecenv` is given, else the Gymnasium env `env_id`."""
    clip = (agent_cfg or {}).get("clip_actions")
    if vecenv:
        factory = resolve_factory(vecenv)
        kwargs = dict(num_envs=num_envs, device=device, seed=seed, env_id=env_id, env_config=dict(env_config),
                      agent_cfg=dict(agent_cfg or {}))
        return FactoryVecEnv(factory, vecenv, kwargs, success_key=success_key, step_timeout=step_timeout)
    if not env_id:
        raise BadInput("no env to run the policy in: pass --env ID (a registered Gymnasium env) or --vecenv "
                       "module:function")
    return GymVecEnv(env_id, env_config, num_envs, device, success_key, step_timeout,
                     clip_actions=float(clip) if clip is not None else None, images=takes_images(agent_cfg))


def takes_images(agent_cfg: dict[str, Any] | None) -> bool:
    """Whether the cfg's actor or critic is a CNN model, which takes (C, H, W) observation groups."""
    blocks = [(agent_cfg or {}).get(role) for role in ("actor", "critic")]
    return any(isinstance(b, dict) and "CNN" in str(b.get("class_name", "")) for b in blocks)
