"""Where a new-API-stack RLlib checkpoint keeps its parts (ray 2.60, checkpoint_version 2.1)."""

from pathlib import Path

MODULES_DIR = Path("learner_group") / "learner" / "rl_module"
#: the training EnvRunner's folder; offline algorithms (BC, MARWIL, CQL) have none, only the evaluation one
RUNNER_DIRS = ("env_runner", "eval_env_runner")
PIPELINE_DIRS = {"env_to_module": "env_to_module_connector", "module_to_env": "module_to_env_connector"}


def module_dir(checkpoint: Path, module_id: str) -> Path:
    return checkpoint / MODULES_DIR / module_id


def runner_dir(checkpoint: Path) -> Path | None:
    """The EnvRunner whose connector pipelines a user's own loop restores: the training one, else (an offline
    algorithm) the evaluation one; None when the checkpoint holds neither."""
    return next((checkpoint / d for d in RUNNER_DIRS if (checkpoint / d).is_dir()), None)


def connector_dir(checkpoint: Path, side: str) -> Path:
    """The saved pipeline `side` ("env_to_module" or "module_to_env") of `runner_dir(checkpoint)`."""
    runner = runner_dir(checkpoint)
    return (runner if runner is not None else checkpoint / RUNNER_DIRS[0]) / PIPELINE_DIRS[side]
