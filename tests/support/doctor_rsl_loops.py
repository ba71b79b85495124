"""Deployment loops of an rsl_rl policy as act-form custom paths
(`--path NAME=tests/support/doctor_rsl_loops.py:FACTORY`),
each as a robot's control loop runs the exported TorchScript policy (`exported/policy.pt`, one robot, batch 1).

`export_loop` calls the policy on each observation and sends its output as it is: no `clip_actions` (which the
training env's wrapper applied). The recurrent ones call the export's own `reset()` at every episode start, or
(the bugs) before every step, or never.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch


class ExportLoop:
    """policy.pt on one robot: reset() at the episode's start, one call per step."""

    def __init__(self, checkpoint: str, reset_every_step: bool = False, reset_on_episode: bool = True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.policy = torch.jit.load(str(Path(checkpoint).parent / "exported" / "policy.pt"), map_location="cpu")
        self.policy.eval()
        self.reset_every_step, self.reset_on_episode = reset_every_step, reset_on_episode

    def reset(self) -> None:
        if self.reset_on_episode:
            self.clear()

    def clear(self) -> None:
        if hasattr(self.policy, "reset"):
            self.policy.reset()

    def act(self, obs):
        if self.reset_every_step:
            self.clear()
        with torch.no_grad():
            return self.policy(torch.as_tensor(np.asarray(obs, dtype=np.float32))[None])[0].numpy()


def export_loop(checkpoint: str, *, explore: bool, device: str):
    return ExportLoop(checkpoint)


def export_loop_reset_every_step(checkpoint: str, *, explore: bool, device: str):
    return ExportLoop(checkpoint, reset_every_step=True)


def export_loop_carried_over(checkpoint: str, *, explore: bool, device: str):
    return ExportLoop(checkpoint, reset_on_episode=False)  # the last episode's state starts the next one
