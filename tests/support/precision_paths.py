"""Users' own loops around an RLlib checkpoint's pipelines (`--path NAME=tests/support/precision_paths.py:FACTORY`),
each the checkpoint's policy in another arithmetic or with one planted change:

- `float32_pipelines`: the checkpoint's connector pipelines and module, as RLlib's inference example runs them (the
  action for the env from module-to-env's ACTIONS_FOR_ENV): the same policy as the `connectors` path;
- `float64_pipelines`: the same with the module in float64: the same policy to float32's rounding;
- `moved_weight_pipelines`: one weight of the policy's first layer moved by 1e-3: another policy, though close.
"""

from __future__ import annotations

import numpy as np
import torch
from ray.rllib.core.columns import Columns

from tests.support.doctor_loops import PolicyInferenceExample

MOVED_BY = 1e-3


class PipelinePolicy(PolicyInferenceExample):
    """RLlib's inference example with explore off, the module in `dtype` (one weight moved by `moved`), sending
    the env the action it is meant to get (module-to-env's ACTIONS_FOR_ENV: unsquashed and clipped)."""

    def __init__(self, checkpoint: str, dtype: torch.dtype = torch.float32, moved: float = 0.0):
        super().__init__(checkpoint, explore=False)
        self.module = self.module.to(dtype)
        self.module.eval()
        self.dtype = dtype
        if moved:
            first = next(p for name, p in self.module.named_parameters() if name.startswith("pi") and p.dim() == 2)
            with torch.no_grad():
                first[0, 0] += moved

    def forward(self, batch):
        batch[Columns.OBS] = batch[Columns.OBS].to(self.dtype)
        with torch.no_grad():
            return self.module.forward_inference(batch)

    def sent(self, to_env):
        return np.asarray(to_env.pop(Columns.ACTIONS_FOR_ENV)[0])


def float32_pipelines(checkpoint: str, *, explore: bool, device: str) -> PipelinePolicy:
    return PipelinePolicy(checkpoint)


def float64_pipelines(checkpoint: str, *, explore: bool, device: str) -> PipelinePolicy:
    return PipelinePolicy(checkpoint, torch.float64)


def moved_weight_pipelines(checkpoint: str, *, explore: bool, device: str) -> PipelinePolicy:
    return PipelinePolicy(checkpoint, moved=MOVED_BY)
