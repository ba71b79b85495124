"""What each path actually uses, read from the live objects it built (not only the saved config).

A `Probe` holds one path's live pieces: its RLModule, its connector pipelines, its explore flag, a
way to make one env as the path makes them, and for RLlib's evaluate its EnvRunner's config. Custom
paths are probed by looking inside the object the user's factory returned (attributes, closure
cells) for an RLModule and connector pipelines; what cannot be found is reported as unknown and never
compared. `facts(probe)` turns a probe into plain, comparable facts; `compare` splits facts into those
that are the same on every path and those that differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from tui_eval.doctor.env_facts import physics_facts
from tui_eval.paths.base import NO_LIBRARY, InferencePath, LibraryParts

#: facts compared across paths, in the order they are shown
FACT_ORDER = ("explore", "action distribution", "normalize_actions", "clip_actions", "env id", "env_config",
              "time limit", "dt", "frame skip", "reward range", "wrappers", "observation space", "action space",
              "env_to_module pieces",
              "module_to_env pieces", "connector state", "weights")


@dataclass
class Probe:
    name: str
    explore: bool | None
    label: str = ""  # "connectors", "evaluate", "custom", "rsl", ... (LiveParts.label)
    module: Any = None
    env_to_module: Any = None
    module_to_env: Any = None
    make_env: Callable[[], Any] | None = None
    recipe: Any = None
    config: Any = None  # an AlgorithmConfig as the path's runner holds it
    checkpoint: Any = None  # the checkpoint directory this path restored
    path: Any = None  # the built path itself
    library: LibraryParts = NO_LIBRARY  # how its module and pipelines are read
    notes: list[str] = field(default_factory=list)


def probe(path, kind) -> Probe:
    """The live pieces of a built path, as it offers them (`InferencePath.live_parts`)."""
    owner = getattr(path, "vs_kind", None) or kind
    base = getattr(path, "vs_base", None) or type(path).__name__
    p = Probe(name=path.name, explore=path.explore, checkpoint=getattr(owner, "checkpoint", None), path=path)
    parts = path.live_parts()
    if parts is None:
        p.label = "other"
        replays = type(path).replay is not InferencePath.replay  # its replay and policy still face the probes
        p.notes.append(f"{type(path).__name__} ({base}): " + ("no settings or env facts to read; its replay and its "
                       "policy are compared" if replays else "only its episodes are compared"))
        return p
    p.label, p.module, p.env_to_module, p.module_to_env = parts.label, parts.module, parts.env_to_module, \
        parts.module_to_env
    p.make_env, p.recipe, p.config, p.library = parts.make_env, parts.recipe, parts.config, parts.library
    if parts.explore is not None:
        p.explore = parts.explore
    if p.recipe is None:  # a `--path` loop (on the second env too) or a vector env's world: the kind's recipe
        p.recipe = getattr(owner, "env", None) or SimpleNamespace(name=getattr(owner, "env_id", None) or "?",
                                                                   env_config=getattr(owner, "env_config", {}))
    if p.label == "custom" and p.module is None:
        p.notes.append("no policy network found inside the custom path's object: weights not compared")
    return p


# ---------------------------------------------------------------------------------------------- facts
def _pieces(pipeline) -> list[str] | None:
    if pipeline is None:
        return None
    return [type(c).__name__ for c in getattr(pipeline, "connectors", [])]


def _normalize_clip(pipeline) -> tuple[Any, Any]:
    for c in getattr(pipeline, "connectors", []) if pipeline is not None else []:
        if type(c).__name__ == "NormalizeAndClipActions":
            return bool(c.normalize_actions), bool(c.clip_actions)
    return (None, None) if pipeline is None else (False, False)


def weight_diff(module, reference_sd: dict[str, Any] | None) -> dict[str, float] | None:
    """{tensor: max abs difference} of the module's weights against the checkpoint's module."""
    if module is None or reference_sd is None:
        return None

    sd = module.state_dict()
    diffs = {}
    for key, ref in reference_sd.items():
        mine = sd.get(key)
        if mine is None:  # an inference-only module (an EnvRunner's) has no value head: nothing to compare
            continue
        a, b = _as_double(mine), _as_double(ref)
        diffs[key] = float("inf") if a.shape != b.shape else float((a - b).abs().max()) if a.numel() else 0.0
    return diffs


def _as_double(value: Any):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().double()
    return torch.as_tensor(np.asarray(value)).double()


def env_facts(make_env: Callable[[], Any] | None, recipe: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    if recipe is not None:
        facts["env id"] = getattr(recipe, "name", str(recipe))
        facts["env_config"] = json.dumps(getattr(recipe, "env_config", {}), sort_keys=True, default=str)
    if make_env is None:
        return facts
    env = make_env()
    try:
        wrappers, e = [], env
        while hasattr(e, "env") and e is not getattr(e, "env", None):
            wrappers.append(type(e).__name__)
            e = e.env
        wrappers = [w for w in wrappers if w not in ("GuardedEnv", "EpisodeRecorder")]
        spec = getattr(env, "spec", None)
        limit = getattr(spec, "max_episode_steps", None)
        for w in _chain(env):
            if type(w).__name__ == "TimeLimit":
                limit = getattr(w, "_max_episode_steps", limit)
                break
        facts["time limit"] = limit
        facts["wrappers"] = " > ".join(wrappers) or "none"
        facts.update(physics_facts(env))
        facts["observation space"] = str(env.observation_space)
        facts["action space"] = str(env.action_space)
        if "env id" not in facts and spec is not None:
            facts["env id"] = spec.id
    finally:
        if make_env.__name__ != "<lambda>":  # a custom path's own env is kept open
            env.close()
    return facts


def _chain(env):
    while env is not None:
        yield env
        env = getattr(env, "env", None)


def facts(p: Probe, reference_sd=None) -> dict[str, Any]:
    """Plain facts of one path; None means unknown (not compared)."""
    f: dict[str, Any] = {"explore": p.explore}
    if p.module is not None:
        try:
            dist = (p.module.get_exploration_action_dist_cls() if p.explore else
                    p.module.get_inference_action_dist_cls())
            f["action distribution"] = getattr(dist, "__name__", str(dist)) + ("" if p.explore else " (deterministic)")
        except Exception:
            pass
    if p.module_to_env is not None:
        f["normalize_actions"], f["clip_actions"] = _normalize_clip(p.module_to_env)
    f.update(env_facts(p.make_env, p.recipe))
    f["env_to_module pieces"] = _pieces(p.env_to_module)
    f["module_to_env pieces"] = _pieces(p.module_to_env)
    states = {}
    for side, pipeline in (("env_to_module", p.env_to_module), ("module_to_env", p.module_to_env)):
        s = p.library.pipeline_state(pipeline)
        if s:
            states[side] = s
    f["connector state"] = states if (p.env_to_module is not None or p.module_to_env is not None) else None
    diffs = weight_diff(p.module, reference_sd)
    differing = {k: v for k, v in (diffs or {}).items() if v > 0}
    idle = p.library.idle_weights(p.module, p.env_to_module, p.make_env, bool(p.explore)) if differing else set()
    # a weight no action depends on differs without changing what the path does: not compared, listed apart
    f["_weights_idle"] = {k: v for k, v in differing.items() if k in idle} or None
    acting = {k: v for k, v in differing.items() if k not in idle}
    f["weights"] = None if diffs is None else acting or "same as checkpoint"
    f["_weight_max"] = None if diffs is None else max(acting.values(), default=0.0)
    return {k: v for k, v in f.items() if v is not None}


def _equal(a: Any, b: Any) -> bool:
    if k_is_state(a) or k_is_state(b):
        return _states_close(a, b)
    return a == b


def k_is_state(v: Any) -> bool:
    return isinstance(v, dict) and any(isinstance(x, dict) for x in v.values())


def _states_close(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_states_close(a[k], b[k]) for k in a)
    try:
        return bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-5, atol=1e-6))
    except (TypeError, ValueError):
        return a == b


def compare(per_path: dict[str, dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """(facts the same on every path that knows them, {fact: {path: value}} for those that differ)."""
    same, differ = [], {}
    keys = [k for k in FACT_ORDER if any(k in f for f in per_path.values())]
    for key in keys:
        values = {name: f[key] for name, f in per_path.items() if key in f}
        if len(values) < 2:
            continue
        items = list(values.values())
        if all(_equal(items[0], v) for v in items[1:]):
            same.append({"fact": key, "value": _jsonable(items[0])})
        else:
            differ[key] = {name: _jsonable(v) for name, v in values.items()}
    return same, differ


def _jsonable(v: Any) -> Any:
    return json.loads(json.dumps(v, default=str))
