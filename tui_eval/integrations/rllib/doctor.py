"""What the doctor compares RLlib paths against: the checkpoint's own module weights and saved connector states,
and the stateful connectors' state in numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_eval.integrations.rllib.parts import connector_states

#: the doctor's probes' fixes in RLlib's terms (CheckpointKind.probe_fix), by probe name
PROBE_FIXES = {
    "observation normalizer missing":
        "run the checkpoint's env_to_module pipeline (its MeanStdFilter keeps the statistics) before calling "
        "`{sus}`, or export the module with the filter's mean and std applied to its input",
    "action not unsquashed":
        "unsquash in `{sus}`: step the env with Columns.ACTIONS_FOR_ENV from module_to_env, not Columns.ACTIONS; "
        "or unsquash_action(action, env.action_space)",
    "recurrent state not reset between episodes":
        "reset the hidden state at every episode's start in `{sus}` to the module's get_initial_state()",
    "stale connector state":
        "restore the env_to_module pipeline with its state (EnvToModulePipeline.from_checkpoint(CKPT/env_runner/"
        "env_to_module_connector)) and do not reset or rebuild the stateful connector in your loop",
    "float64 vs float32":
        "give the module float32 observations on both paths (np.asarray(obs, dtype=np.float32), as RLlib's "
        "env_to_module pipeline does), and keep the module in float32",
    "actions clipped differently":
        "clip the same way on both paths (RLlib: clip_actions and normalize_actions in the config, applied by "
        "the module_to_env pipeline)",
}


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
