"""RLlib's parts wherever a path holds them (a built-in path, or inside a user's loop): its RLModule and connector
pipelines found by walking an object, a module's output on one observation, the state of stateful connectors in
plain numbers, and which weights an action depends on. `RLLIB_PARTS` offers them to the doctor and to `--path`
loops (tui_eval/paths/base.py LibraryParts). Imports RLlib only when called.

Which of a module's weights can change what the path does: those the action distribution's inputs depend on.
A weight no action depends on (a value head, a critic's encoder) may differ between paths without any path acting
otherwise; reporting it as a cause would send the user after nothing. Whether an action depends on a weight is
told the way autograd tells it: the path's module runs its own forward (inference or exploration, as the path
does) on a real first observation passed through the path's own env-to-module pipeline, and the weights the
backward pass from the action distribution's inputs never reaches cannot change an action, on this step or any
other (the graph is the module's, not the observation's). Where this cannot be told (no module, no env, a forward
that runs without autograd), every weight counts as acting.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from tui_eval.paths.base import LibraryParts


class RllibParts(LibraryParts):
    """RLlib's answers to the doctor's questions about live parts."""

    def find(self, target: Any) -> dict[str, Any]:
        return find_live(target)

    def modules_by_id(self, holder: Any) -> dict[str, Any]:
        return modules_of(holder)

    def module_logits(self, module: Any, explore: bool) -> Callable[[Any], Any] | None:
        return module_logits(module, explore)

    def pipeline_state(self, pipeline: Any) -> dict[str, Any] | None:
        return connector_states(pipeline)

    def idle_weights(self, module: Any, env_to_module: Any, make_env: Any, explore: bool) -> set[str]:
        return idle_weights(module, env_to_module, make_env, explore)


RLLIB_PARTS = RllibParts()


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


def modules_of(holder: Any, depth: int = 3) -> dict[str, Any]:
    """Modules by ID reachable from `holder` (a path's MultiRLModule, or inside a loop's object: attributes and
    closure cells holding a MultiRLModule or a dict of RLModules); {} when none is found."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
    from ray.rllib.core.rl_module.rl_module import RLModule

    if isinstance(holder, MultiRLModule):
        return dict(holder.items())
    if isinstance(holder, dict) and holder and all(isinstance(v, RLModule) for v in holder.values()):
        return {str(k): v for k, v in holder.items()}
    if depth == 0 or holder is None or isinstance(holder, (str, bytes, int, float, RLModule)):
        return {}
    children = [c.cell_contents for c in getattr(holder, "__closure__", None) or () if c.cell_contents is not None]
    if hasattr(holder, "__dict__") and not isinstance(holder, type):
        children += list(vars(holder).values())
    for child in children:
        found = modules_of(child, depth - 1)
        if found:
            return found
    return {}


def idle_weights(module: Any, env_to_module: Any, make_env: Any, explore: bool) -> set[str]:
    """Names of `module`'s parameters that no action depends on (empty when it cannot be told)."""
    if module is None or make_env is None or not hasattr(module, "named_parameters"):
        return set()
    try:
        batch = _first_batch(module, env_to_module, make_env, explore)
        return _unreached(module, batch, explore)
    except Exception:  # a module or pipeline this cannot drive: every weight counts as acting
        return set()


def _first_batch(module: Any, env_to_module: Any, make_env: Any, explore: bool) -> dict[str, Any]:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode

    env = make_env()
    try:
        obs, _ = env.reset(seed=0)
        spaces = env.observation_space, env.action_space
    finally:
        env.close()
    if env_to_module is None:
        return {Columns.OBS: torch.as_tensor(obs)[None]}
    episode = SingleAgentEpisode(observation_space=spaces[0], action_space=spaces[1])
    episode.add_env_reset(observation=obs)
    return copy.deepcopy(env_to_module)(rl_module=module, episodes=[episode], batch={}, explore=explore,
                                        shared_data={})


def _unreached(module: Any, batch: dict[str, Any], explore: bool) -> set[str]:
    import torch
    from ray.rllib.core.columns import Columns

    params = dict(module.named_parameters())
    wanted = {name: p.requires_grad for name, p in params.items()}
    try:
        for p in params.values():
            p.requires_grad_(True)
            p.grad = None
        with torch.enable_grad():
            inputs = _action_forward(module, batch, explore)[Columns.ACTION_DIST_INPUTS]
            if inputs.grad_fn is None:  # a forward of the user's own that turns autograd off: cannot tell
                return set()
            inputs.float().sum().backward()
        reached = {name for name, p in params.items() if p.grad is not None}
    finally:
        for name, p in params.items():
            p.grad = None
            p.requires_grad_(wanted[name])
    return set(params) - reached if reached else set()  # nothing reached: a forward without autograd


def _action_forward(module: Any, batch: dict[str, Any], explore: bool) -> dict[str, Any]:
    """The module's inference (or exploration) forward with autograd on: RLlib's default one is its `_forward`
    under `torch.no_grad()`, so that `_forward` is called; a module's own override is called as it is."""
    from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule

    method = "_forward_exploration" if explore else "_forward_inference"
    if getattr(type(module), method, None) is getattr(TorchRLModule, method):
        return module._forward(batch)
    return getattr(module, method)(batch)
