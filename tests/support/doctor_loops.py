"""Users' own loops and policies, as custom paths (`--path NAME=tests/support/doctor_loops.py:FACTORY`).

Each factory takes (checkpoint, *, explore, device) and returns a run_episode(env) callable (episode form)
or an object with act(obs) (act form). Some carry one classic bug on purpose, for the doctor's tests.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from ray.rllib.connectors.env_to_module import EnvToModulePipeline
from ray.rllib.connectors.module_to_env import ModuleToEnvPipeline
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.utils.numpy import convert_to_numpy

MODULE = Path("learner_group") / "learner" / "rl_module" / "default_policy"


def _module(checkpoint: str) -> RLModule:
    module = RLModule.from_checkpoint(str(Path(checkpoint) / MODULE))
    module.eval()
    return module


def _greedy(module: RLModule, obs) -> np.ndarray:
    with torch.no_grad():
        out = module.forward_inference({Columns.OBS: torch.as_tensor(np.asarray(obs, dtype=np.float32))[None]})
    dist = module.get_inference_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
    return convert_to_numpy(dist.to_deterministic().sample())[0]


class GreedyPolicy:
    """Act form, faithful for a discrete env with stock connectors: the distribution's mode."""

    def __init__(self, checkpoint: str):
        self.module = _module(checkpoint)

    def act(self, obs):
        return _greedy(self.module, obs)


def greedy_policy(checkpoint: str, *, explore: bool, device: str):
    return GreedyPolicy(checkpoint)


def raw_action_episode(checkpoint: str, *, explore: bool, device: str):
    """Episode form with a bug: sends the module's action (squashed, before unsquash) to a Box env."""
    module = _module(checkpoint)

    def run_episode(env) -> None:
        obs, _ = env.reset()
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(_greedy(module, obs))
            done = terminated or truncated

    return run_episode


def fresh_filter_episode(checkpoint: str, *, explore: bool, device: str):
    """Episode form with ray#53588's bug: the pipelines are restored, but the MeanStdFilter's state is reset."""
    module = _module(checkpoint)
    connectors = Path(checkpoint) / "env_runner"
    env_to_module = EnvToModulePipeline.from_checkpoint(str(connectors / "env_to_module_connector"))
    module_to_env = ModuleToEnvPipeline.from_checkpoint(str(connectors / "module_to_env_connector"))
    for connector in env_to_module.connectors:
        if type(connector).__name__ == "MeanStdFilter":
            connector._filters = None  # "a fresh filter": its running statistics start from zero

    def run_episode(env) -> None:
        obs, info = env.reset()
        episode = SingleAgentEpisode(observation_space=env.observation_space, action_space=env.action_space)
        episode.add_env_reset(observation=obs, infos=info)
        shared: dict = {}
        done = False
        while not done:
            batch = env_to_module(rl_module=module, episodes=[episode], batch={}, explore=False, shared_data=shared)
            with torch.no_grad():
                out = module.forward_inference(batch)
            out = module_to_env(rl_module=module, batch=out, episodes=[episode], explore=False, shared_data=shared)
            action = out[Columns.ACTIONS_FOR_ENV][0]
            obs, reward, terminated, truncated, info = env.step(action)
            episode.add_env_step(observation=obs, action=out[Columns.ACTIONS][0], reward=reward, infos=info,
                                 terminated=terminated, truncated=truncated)
            done = terminated or truncated

    return run_episode


class StaleStatisticsPolicy:
    """Act form with a bug: normalizes observations with statistics saved at another time (not the
    checkpoint's MeanStdFilter state) before the checkpoint's module."""

    mean, std = np.full(4, 0.5, dtype=np.float32), np.full(4, 0.05, dtype=np.float32)

    def __init__(self, checkpoint: str):
        self.module = _module(checkpoint)

    def act(self, obs):
        return _greedy(self.module, (np.asarray(obs, dtype=np.float32) - self.mean) / self.std)


def stale_statistics_policy(checkpoint: str, *, explore: bool, device: str):
    return StaleStatisticsPolicy(checkpoint)


class LstmPolicy:
    """Act form for an LSTM checkpoint: the module's own state carried from step to step, greedy actions;
    `reset()` starts each episode from the module's initial state unless `carry_over` (the bug: the state of
    the last episode starts the next one), or before every step with `reset_every_step` (the other bug)."""

    def __init__(self, checkpoint: str, carry_over: bool = False, reset_every_step: bool = False):
        self.module, self.carry_over, self.reset_every_step = _module(checkpoint), carry_over, reset_every_step
        self.state = self.module.get_initial_state()

    def reset(self) -> None:
        if not self.carry_over:
            self.state = self.module.get_initial_state()

    def act(self, obs):
        import tree

        if self.reset_every_step:
            self.state = self.module.get_initial_state()
        batch = {Columns.OBS: torch.as_tensor(np.asarray(obs, dtype=np.float32))[None, None],
                 Columns.STATE_IN: tree.map_structure(lambda s: torch.as_tensor(s)[None], self.state)}
        with torch.no_grad():
            out = self.module.forward_inference(batch)
        self.state = tree.map_structure(lambda s: s[0], out[Columns.STATE_OUT])
        return int(torch.argmax(out[Columns.ACTION_DIST_INPUTS][0, 0]))


def lstm_policy(checkpoint: str, *, explore: bool, device: str):
    return LstmPolicy(checkpoint)


def lstm_carried_over(checkpoint: str, *, explore: bool, device: str):
    return LstmPolicy(checkpoint, carry_over=True)


def lstm_reset_every_step(checkpoint: str, *, explore: bool, device: str):
    return LstmPolicy(checkpoint, reset_every_step=True)


class PolicyInferenceExample:
    """Act form of RLlib's policy-inference example (`policy_inference_after_training_w_connector.py`), as
    its users write it: both connector pipelines restored from the checkpoint's env_runner, the module from
    its learner (value head included), one SingleAgentEpisode per episode, `forward_inference` (or
    `forward_exploration`), the action popped from the module-to-env output."""

    def __init__(self, checkpoint: str, explore: bool):
        runner = Path(checkpoint) / "env_runner"
        self.env_to_module = EnvToModulePipeline.from_checkpoint(str(runner / "env_to_module_connector"))
        self.module_to_env = ModuleToEnvPipeline.from_checkpoint(str(runner / "module_to_env_connector"))
        self.module, self.explore = RLModule.from_checkpoint(str(Path(checkpoint) / MODULE)), explore
        self.episode: SingleAgentEpisode | None = None
        self.last: tuple = ()

    def reset(self) -> None:
        self.episode, self.last = None, ()

    def act(self, obs):
        if self.episode is None:
            self.episode = SingleAgentEpisode(observations=[obs])
        else:
            action, extra = self.last
            self.episode.add_env_step(obs, action, 0.0, extra_model_outputs=extra)
        shared: dict = {}
        batch = self.env_to_module(episodes=[self.episode], rl_module=self.module, explore=self.explore,
                                   shared_data=shared)
        out = self.forward(batch)
        to_env = self.module_to_env(batch=out, episodes=[self.episode], rl_module=self.module,
                                    explore=self.explore, shared_data=shared)
        sent = self.sent(to_env)
        action = to_env.pop(Columns.ACTIONS)[0]
        self.last = action, {k: v[0] for k, v in to_env.items()}
        return action if sent is None else sent

    def forward(self, batch):
        return (self.module.forward_exploration if self.explore else self.module.forward_inference)(batch)

    def sent(self, to_env) -> object | None:
        """What the loop sends to the env when not the module's action itself (None: `Columns.ACTIONS`, as the
        example does)."""
        return None


def policy_inference_example(checkpoint: str, *, explore: bool, device: str):
    return PolicyInferenceExample(checkpoint, explore)
