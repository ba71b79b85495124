"""Faulty deployments as act-form custom paths (`--path NAME=tests/support/doctor_faulty_loops.py:FACTORY`), one
classic mistake each, for the doctor's probes; `faithful` is the same deployment done right.

The RLlib ones run the checkpoint's module on Pendulum (continuous actions: a probe's proof compares
real numbers); the GRU ones are a small recurrent policy of fixed random weights, with its state kept,
carried over between episodes, or reset every step.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from gymnasium.envs.classic_control.pendulum import PendulumEnv
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.numpy import convert_to_numpy
from ray.rllib.utils.spaces.space_utils import unsquash_action

MODULE = Path("learner_group") / "learner" / "rl_module" / "default_policy"


class ModulePolicy:
    """The checkpoint's module, greedy, its action unsquashed as module_to_env does; subclasses add one bug."""

    dtype = np.float32

    def __init__(self, checkpoint: str):
        self.module = RLModule.from_checkpoint(str(Path(checkpoint) / MODULE))
        self.module.eval()
        self.space = None

    def observe(self, obs) -> torch.Tensor:
        return torch.as_tensor(np.asarray(obs, dtype=self.dtype))[None]

    def act(self, obs):
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: self.observe(obs)})
            dist = self.module.get_inference_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
            action = convert_to_numpy(self.sample(dist))[0]
        return self.for_env(action)

    def sample(self, dist):
        return dist.to_deterministic().sample()

    def for_env(self, action):
        return unsquash_action(action, gym.spaces.Box(-2.0, 2.0, (1,), np.float32))


class Sampling(ModulePolicy):
    def sample(self, dist):
        return dist.sample()  # explore on: a draw from the distribution, not its mode


class Clipped(ModulePolicy):
    def for_env(self, action):
        return np.clip(super().for_env(action), -0.5, 0.5)  # rsl_rl-style clip_actions=0.5 on a ±2 env


class RawActions(ModulePolicy):
    def for_env(self, action):
        return action  # the module's Columns.ACTIONS, not unsquashed to the env's ±2 (ACTIONS_FOR_ENV)


class Scaled(ModulePolicy):
    def for_env(self, action):
        return 0.8 * super().for_env(action)  # another action scale


class SwappedObservation(ModulePolicy):
    def observe(self, obs):
        return super().observe(np.asarray(obs)[[1, 0, 2]])  # cos and sin in another order


class FarPendulum(PendulumEnv):
    """Pendulum whose observations are float64 and far from zero (as world positions or timestamps are):
    rounding them to float32 changes them by up to 1.2e-4."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (3,), np.float64)

    def _get_obs(self):
        theta, thetadot = self.state
        return np.array([3000.0 + np.cos(theta), np.sin(theta), thetadot], dtype=np.float64)


if "FarPendulum-v0" not in gym.registry:  # this file is imported by the tests and loaded by --path
    gym.register("FarPendulum-v0", entry_point=FarPendulum, max_episode_steps=200)


class Float32(ModulePolicy):
    """On FarPendulum: the observation cast to float32 (as RLlib's pipelines do), then shifted back."""

    def observe(self, obs):
        return super().observe(obs) - torch.tensor([3000.0, 0.0, 0.0], dtype=torch.float64).to(self.module_dtype)

    @property
    def module_dtype(self):
        return next(self.module.parameters()).dtype


class Float64(Float32):
    dtype = np.float64

    def __init__(self, checkpoint: str):
        super().__init__(checkpoint)
        self.module = self.module.double()


class TrainMode(ModulePolicy, torch.nn.Module):
    """A wrapper network with dropout on its input, never switched to eval mode."""

    def __init__(self, checkpoint: str):
        torch.nn.Module.__init__(self)
        ModulePolicy.__init__(self, checkpoint)
        self.dropout = torch.nn.Dropout(0.2)
        self.train()

    def observe(self, obs):
        return self.dropout(super().observe(obs))


def faithful(checkpoint: str, *, explore: bool, device: str):
    return ModulePolicy(checkpoint)


def sampling(checkpoint: str, *, explore: bool, device: str):
    return Sampling(checkpoint)


def clipped(checkpoint: str, *, explore: bool, device: str):
    return Clipped(checkpoint)


def raw_actions(checkpoint: str, *, explore: bool, device: str):
    return RawActions(checkpoint)


def scaled(checkpoint: str, *, explore: bool, device: str):
    return Scaled(checkpoint)


def swapped_observation(checkpoint: str, *, explore: bool, device: str):
    return SwappedObservation(checkpoint)


def float32(checkpoint: str, *, explore: bool, device: str):
    return Float32(checkpoint)


def float64(checkpoint: str, *, explore: bool, device: str):
    return Float64(checkpoint)


def train_mode(checkpoint: str, *, explore: bool, device: str):
    return TrainMode(checkpoint)


class Gru:
    """A GRU policy for Pendulum (3 observations, 1 action in ±2), fixed random weights."""

    def __init__(self, reset_on_episode: bool = True, reset_every_step: bool = False, dtype=torch.float32):
        gen = torch.Generator().manual_seed(7)
        self.cell = torch.nn.GRUCell(3, 8)
        self.head = torch.nn.Linear(8, 1)
        with torch.no_grad():
            for p in [*self.cell.parameters(), *self.head.parameters()]:
                p.copy_(torch.randn(p.shape, generator=gen))
        self.reset_on_episode, self.reset_every_step, self.dtype = reset_on_episode, reset_every_step, dtype
        self.cell, self.head = self.cell.to(dtype), self.head.to(dtype)
        self.h = torch.zeros(1, 8, dtype=dtype)

    def reset(self):
        if self.reset_on_episode:
            self.h = torch.zeros(1, 8, dtype=self.dtype)

    def act(self, obs):
        if self.reset_every_step:
            self.h = torch.zeros(1, 8, dtype=self.dtype)
        with torch.no_grad():
            self.h = self.cell(torch.as_tensor(np.asarray(obs), dtype=self.dtype)[None], self.h)
            return (2.0 * torch.tanh(self.head(self.h)))[0].numpy()


def gru(checkpoint: str, *, explore: bool, device: str):
    return Gru()


def gru_carried_over(checkpoint: str, *, explore: bool, device: str):
    return Gru(reset_on_episode=False)  # the hidden state of the last episode starts the next one


def gru_reset_every_step(checkpoint: str, *, explore: bool, device: str):
    return Gru(reset_every_step=True)


def gru_float64(checkpoint: str, *, explore: bool, device: str):
    return Gru(dtype=torch.float64)  # the same weights, computed in float64
