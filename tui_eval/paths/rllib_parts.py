"""RLlib's parts wherever a path holds them (a built-in path, or inside a user's loop): its RLModule and connector
pipelines found by walking an object, a module's output on one observation, and the state of stateful connectors
in plain numbers. Imports RLlib only when called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def find_live(target: Any, depth: int = 3) -> dict[str, Any]:
    """An RLModule and connector pipelines reachable from the user's object (attributes, closures)."""
    found: dict[str, Any] = {"module": None, "env_to_module": None, "module_to_env": None}
    try:
        from ray.rllib.connectors.env_to_module import EnvToModulePipeline
        from ray.rllib.connectors.module_to_env import ModuleToEnvPipeline
        from ray.rllib.core.rl_module.rl_module import RLModule
    except ImportError:
        return found
    seen: set[int] = set()

    def visit(obj: Any, level: int) -> None:
        if obj is None or id(obj) in seen or level > depth:
            return
        seen.add(id(obj))
        if isinstance(obj, RLModule):
            found["module"] = found["module"] or obj
            return
        if isinstance(obj, EnvToModulePipeline):
            found["env_to_module"] = found["env_to_module"] or obj
            return
        if isinstance(obj, ModuleToEnvPipeline):
            found["module_to_env"] = found["module_to_env"] or obj
            return
        children: list[Any] = []
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                children.append(cell.cell_contents)
            except ValueError:
                pass
        if hasattr(obj, "__self__"):
            children.append(obj.__self__)
        if hasattr(obj, "__dict__") and not isinstance(obj, type):
            children.extend(v for v in vars(obj).values())
        if isinstance(obj, (list, tuple)):
            children.extend(obj)
        if isinstance(obj, dict):
            children.extend(obj.values())
        for child in children:
            if isinstance(child, (str, bytes, int, float, bool, np.ndarray)):
                continue
            visit(child, level + 1)

    visit(target, 0)
    return found


def module_logits(module: Any, explore: bool) -> Callable[[np.ndarray], np.ndarray]:
    import torch
    from ray.rllib.core.columns import Columns

    def logits(z: np.ndarray) -> np.ndarray:
        batch = {Columns.OBS: torch.as_tensor(np.asarray(z, dtype=np.float32))[None]}
        with torch.no_grad():
            out = module._forward_exploration(batch) if explore else module._forward_inference(batch)
        return out[Columns.ACTION_DIST_INPUTS][0].detach().cpu().numpy()

    return logits


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
