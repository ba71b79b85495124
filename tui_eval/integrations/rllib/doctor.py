"""What the doctor compares RLlib paths against: the checkpoint's own module weights and saved connector states,
and the stateful connectors' state in numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_eval.paths.rllib_parts import connector_states


def saved_connector_states(checkpoint: Path) -> dict[str, Any]:
    """The stateful connectors' state as saved in the checkpoint."""
    from ray.rllib.connectors.env_to_module import EnvToModulePipeline
    from ray.rllib.connectors.module_to_env import ModuleToEnvPipeline

    from tui_eval.integrations.rllib.paths.layout import connector_dir

    out = {}
    for side, cls in (("env_to_module", EnvToModulePipeline), ("module_to_env", ModuleToEnvPipeline)):
        folder = connector_dir(checkpoint, side)
        if folder.is_dir():
            try:
                out[side] = connector_states(cls.from_checkpoint(str(folder)))
            except Exception:
                pass
    return out


def reference_weights(checkpoint: Path, module_id: str) -> dict[str, Any]:
    from ray.rllib.core.rl_module.rl_module import RLModule

    from tui_eval.integrations.rllib.paths.layout import module_dir

    module: Any = RLModule.from_checkpoint(str(module_dir(checkpoint, module_id)))
    return module.state_dict()
