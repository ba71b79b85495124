"""Checkpoints as RLlib users make them: trained by the user's own script, from the folder holding their
module (tests/support/user_project), copied to a temporary directory so that nothing else can import it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROJECT_SOURCE = Path(__file__).resolve().parent / "user_project"
MODULE = "my_rl_project"


@dataclass(frozen=True)
class UserCheckpoints:
    project: Path  # the user's folder: my_rl_project.py and the training script
    experiment: Path  # a tune.Tuner experiment directory (PPO_*/checkpoint_*)
    eval_time_limit: Path  # Pendulum; evaluation_config cuts episodes to 100 steps
    strict_module: Path  # a custom RLModule whose inference forward raises
    float_carracing: Path  # pixels behind a float32 wrapper registered with tune.register_env

    @property
    def module_file(self) -> Path:
        return self.project / f"{MODULE}.py"


def user_checkpoints(root: Path) -> UserCheckpoints:
    """The checkpoints the job `user_checkpoints` (tests/support/jobs.py) trained under `root`: the user's
    script, run from a copy of their folder (root/project) with nothing of ours on its import path."""
    out = root / "checkpoints"
    return UserCheckpoints(project=root / "project", experiment=out / "ray_storage" / "my_experiment",
                           eval_time_limit=out / "eval_time_limit", strict_module=out / "strict_module",
                           float_carracing=out / "float_carracing")
