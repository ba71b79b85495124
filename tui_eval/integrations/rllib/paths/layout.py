"""Where a new-API-stack RLlib checkpoint keeps its parts (ray 2.60, checkpoint_version 2.1)."""

from pathlib import Path

MODULES_DIR = Path("learner_group") / "learner" / "rl_module"
CONNECTOR_DIRS = {
    "env_to_module": Path("env_runner") / "env_to_module_connector",
    "module_to_env": Path("env_runner") / "module_to_env_connector",
}


def module_dir(checkpoint: Path, module_id: str) -> Path:
    return checkpoint / MODULES_DIR / module_id
