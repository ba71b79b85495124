"""Users' own loops around an RLlib checkpoint's pipelines (`--path NAME=tests/support/precision_paths.py:FACTORY`),
each the checkpoint's policy in another arithmetic or with one planted change:

- `float32_pipelines`: the checkpoint's connector pipelines and module, as RLlib's inference example runs them (the
  action for the env from module-to-env's ACTIONS_FOR_ENV): the same policy as the `connectors` path;
- `float64_pipelines`: the same with the module in float64: the same policy to float32's rounding;
- `moved_weight_pipelines`: one weight of the policy's first layer moved by 1e-3: another policy, though close.
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

MODULE = Path("learner_group") / "learner" / "rl_module" / "default_policy"
MOVED_BY = 1e-3


class PipelinePolicy:
    """Act form: both pipelines restored from the checkpoint's env_runner, the module from its learner, one episode
    per episode, `forward_inference`, the action the env is sent (ACTIONS_FOR_ENV); the module in `dtype`."""

    def __init__(self, checkpoint: str, dtype: torch.dtype = torch.float32, moved: float = 0.0):
        runner = Path(checkpoint) / "env_runner"
        self.env_to_module = EnvToModulePipeline.from_checkpoint(str(runner / "env_to_module_connector"))
        self.module_to_env = ModuleToEnvPipeline.from_checkpoint(str(runner / "module_to_env_connector"))
        self.module = RLModule.from_checkpoint(str(Path(checkpoint) / MODULE)).to(dtype)
        self.module.eval()
        self.dtype = dtype
        if moved:
            first = next(p for name, p in self.module.named_parameters() if name.startswith("pi") and p.dim() == 2)
            with torch.no_grad():
                first[0, 0] += moved
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
        batch = self.env_to_module(episodes=[self.episode], rl_module=self.module, explore=False, shared_data=shared)
        batch[Columns.OBS] = batch[Columns.OBS].to(self.dtype)
        with torch.no_grad():
            out = self.module.forward_inference(batch)
        to_env = self.module_to_env(batch=out, episodes=[self.episode], rl_module=self.module, explore=False,
                                    shared_data=shared)
        sent = np.asarray(to_env.pop(Columns.ACTIONS_FOR_ENV)[0])
        action = to_env.pop(Columns.ACTIONS)[0]
        self.last = action, {k: v[0] for k, v in to_env.items()}
        return sent


def float32_pipelines(checkpoint: str, *, explore: bool, device: str) -> PipelinePolicy:
    return PipelinePolicy(checkpoint)


def float64_pipelines(checkpoint: str, *, explore: bool, device: str) -> PipelinePolicy:
    return PipelinePolicy(checkpoint, torch.float64)


def moved_weight_pipelines(checkpoint: str, *, explore: bool, device: str) -> PipelinePolicy:
    return PipelinePolicy(checkpoint, moved=MOVED_BY)
