"""What the doctor compares RLlib paths against: the checkpoint's own module weights and saved connector states,
and the stateful connectors' state in numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


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


def connector_states(pipeline) -> dict[str, Any] | None:
    """{piece name: summary of its state} for every stateful piece (a non-empty get_state())."""
    if pipeline is None:
        return None
    states = {}
    for i, c in enumerate(getattr(pipeline, "connectors", [])):
        try:
            state = c.get_state()
        except Exception:
            continue
        if state:
            states[f"{i}:{type(c).__name__}"] = summarise_state(state)
    return states


def summarise_state(state: Any) -> dict[str, Any]:
    """Counts and means of running statistics (MeanStdFilter), else every number found, flattened."""
    from ray.rllib.utils.filter import _deserialize_ndarray

    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            if "num_pushes" in value and "mean_array" in value:
                mean = _deserialize_ndarray(value["mean_array"])
                ssd = _deserialize_ndarray(value["sum_sq_diff_array"])
                n = int(value["num_pushes"])
                std = np.sqrt(ssd / (n - 1)) if n > 1 else np.zeros_like(mean)
                out[f"{prefix}count"] = n
                out[f"{prefix}mean"] = np.round(np.asarray(mean, dtype=float), 4).tolist()
                out[f"{prefix}std"] = np.round(np.asarray(std, dtype=float), 4).tolist()
                return
            for k, v in value.items():
                walk(f"{prefix}{k}.", v)
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(f"{prefix}{i}.", v)
        elif isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            out[prefix.rstrip(".")] = float(value)
        elif isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
            out[prefix.rstrip(".")] = np.round(value.astype(float), 4).tolist()

    walk("", state)
    if any(k.endswith("count") for k in out):  # running statistics: their numbers are what matters
        out = {k: v for k, v in out.items() if k.rsplit(".", 1)[-1] in ("count", "mean", "std")}
    return {k.replace("None.", "").replace("running_stats.", "stats "): v for k, v in out.items()}
