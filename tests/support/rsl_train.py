"""Tiny rsl_rl checkpoints trained for the tests in seconds: real OnPolicyRunner.learn on real envs.

`train(folder, cfg, env_id, env_config)` trains with tui-eval's Gymnasium VecEnv adapter and writes
`model_<it>.pt` (OnPolicyRunner.save), optionally with the cfg as Isaac Lab's `params/agent.yaml`.
`PixelPointGoalEnv` is PointGoal seen through an 8×8 image (a CNN's task), with the true state as a
separate group a privileged critic reads.
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
import yaml
from gymnasium import spaces

from tui_eval.envs.point_goal import PointGoalEnv
from tui_eval.integrations.rsl_rl.paths.model import quiet
from tui_eval.integrations.rsl_rl.paths.vecenv import GymVecEnv, takes_images

SMALL_PPO = {"class_name": "PPO", "num_learning_epochs": 2, "num_mini_batches": 2, "learning_rate": 1e-3}


class CountingFeed:
    """Training seeds 0, 1, 2, ... (far below the held-out seeds tui-eval evaluates on)."""

    cancelled = False
    heartbeat = None

    def __init__(self) -> None:
        self._seeds = itertools.count()

    def take(self):
        return next(self._seeds), 0


def recurrent_cfg(rnn_type: str, hidden: int = 16, layers: int = 1) -> dict[str, Any]:
    model = {"class_name": "RNNModel", "hidden_dims": [16], "activation": "elu", "obs_normalization": True,
             "rnn_type": rnn_type, "rnn_hidden_dim": hidden, "rnn_num_layers": layers}
    return {"num_steps_per_env": 16, "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
            "actor": {**model, "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 0.5}},
            "critic": dict(model), "algorithm": dict(SMALL_PPO)}


def train(folder: Path, cfg: dict[str, Any], env_id: str, env_config: dict[str, Any] | None = None,
          iterations: int = 2, num_envs: int = 4, write_cfg: dict[str, Any] | None = None) -> Path:
    """Train `iterations` PPO iterations; save the checkpoint (and `write_cfg` as params/agent.yaml)."""
    from rsl_rl.runners import OnPolicyRunner

    torch.manual_seed(0)
    folder.mkdir(parents=True, exist_ok=True)
    env = GymVecEnv(env_id, env_config or {}, num_envs, "cpu", images=takes_images(cfg))
    env.begin(CountingFeed())
    try:
        with quiet():
            runner = OnPolicyRunner(env, copy.deepcopy(cfg), log_dir=None, device="cpu")  # rsl_rl 5.4 pops class names
            runner.learn(iterations)
    finally:
        env.close()
    checkpoint = folder / f"model_{iterations - 1}.pt"
    runner.save(str(checkpoint))
    if write_cfg is not None:
        (folder / "params").mkdir(exist_ok=True)
        (folder / "params" / "agent.yaml").write_text(yaml.safe_dump(write_cfg, sort_keys=False))
    return checkpoint


class PixelPointGoalEnv(gym.Env):
    """PointGoal whose actor sees the point as a lit pixel of an 8×8 image (`image`, shape (1, 8, 8)) and the
    goal as numbers (`goal`); `state` (point and goal) is for a privileged critic."""

    metadata = {"render_modes": []}

    def __init__(self):
        self.inner = PointGoalEnv()
        self.observation_space = spaces.Dict({
            "image": spaces.Box(0.0, 1.0, shape=(1, 8, 8), dtype=np.float32),
            "goal": spaces.Box(-1.0, 2.0, shape=(2,), dtype=np.float32),
            "state": spaces.Box(-1.0, 2.0, shape=(4,), dtype=np.float32)})
        self.action_space = self.inner.action_space

    def _obs(self, state: np.ndarray) -> dict[str, np.ndarray]:
        image = np.zeros((1, 8, 8), dtype=np.float32)
        x, y = (np.clip(state[:2], 0.0, 0.999) * 8).astype(int)
        image[0, y, x] = 1.0
        return {"image": image, "goal": state[2:].copy(), "state": state}

    def reset(self, *, seed=None, options=None):
        state, info = self.inner.reset(seed=seed)
        return self._obs(state), info

    def step(self, action):
        state, reward, terminated, truncated, info = self.inner.step(action)
        return self._obs(state), reward, terminated, truncated, info


if "PixelPointGoal-v0" not in gym.registry:
    gym.register("PixelPointGoal-v0", entry_point=PixelPointGoalEnv, max_episode_steps=30)
