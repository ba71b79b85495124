"""`--vs-env ENV` / `--vs-env-config JSON` / `--vs-vecenv MODULE:FUNCTION`: sim-to-sim parity.

The run's first path's policy also runs on a second env (another simulator, a randomised variant,
another time limit), on the same paired seeds, as path `<path>@vs-env`. Any built-in path P of the
kind can be named `P@vs-env` in `--paths`; without `--paths` the run is `P,P@vs-env` with P the
kind's second default path (RLlib `connectors`, rsl_rl `jit`: the deployed policy), as `--vs` picks.
`--vs-env-config` alone keeps the env and changes its kwargs; with the same env id as the checkpoint's,
the checkpoint's env_config is kept and updated.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tui_eval.kinds.base import CheckpointKind
from tui_eval.paths.base import InferencePath
from tui_eval.spec import BadInput, RunSpec

SUFFIX = "@vs-env"


def parse_env_config(text: str | None) -> dict[str, Any]:
    """The `--vs-env-config` JSON object ({} when not given)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"--vs-env-config is not valid JSON ({exc.msg}); e.g. --vs-env-config "
                       "'{\"max_episode_steps\": 100}'") from None
    if not isinstance(value, dict):
        raise BadInput("--vs-env-config must be a JSON object, e.g. '{\"max_episode_steps\": 100}'")
    return value


def env_label(spec: RunSpec) -> str:
    parts = [spec.vs_env or "the same env"]
    if spec.vs_env_config:
        parts.append(json.dumps(spec.vs_env_config, sort_keys=True))
    if spec.vs_vecenv:
        parts = [f"--vs-vecenv {spec.vs_vecenv}"]
    return " ".join(parts)


def _variant(kind: Any, spec: RunSpec) -> Any:
    """A shallow copy of the kind whose env is the second one."""
    other = copy.copy(kind)
    if kind.name == "rllib":
        from tui_eval.paths.rllib_env import resolve_env

        name = spec.vs_env or kind.env.name
        config = dict(kind.env.env_config) if name == kind.env.name else {}
        config.update(spec.vs_env_config)
        other.env = other.eval_env = resolve_env(name, config)
        other._check_observation_spaces()
    elif kind.name == "rsl_rl":
        other.env_id = spec.vs_env or (None if spec.vs_vecenv else kind.env_id)
        config = dict(kind.env_config) if other.env_id == kind.env_id else {}
        config.update(spec.vs_env_config)
        other.env_config = config
        other.vecenv = spec.vs_vecenv or (None if spec.vs_env else kind.vecenv)
        if not other.env_id and not other.vecenv:
            raise BadInput("--vs-env-config needs an env to change: pass --vs-env ID or --vs-vecenv MODULE:FUNCTION")
    else:
        raise BadInput(f"--vs-env is not available for {kind.name} checkpoints")
    return other


def attach_vs_env(kind: Any, spec: RunSpec) -> CheckpointKind:
    """Make `P@vs-env` buildable by `kind` for each of its built-in paths P; settle the run's paths."""
    if not (spec.vs_env or spec.vs_env_config or spec.vs_vecenv):
        return kind
    if spec.vs_vecenv and kind.name != "rsl_rl":
        raise BadInput("--vs-vecenv is for rsl_rl checkpoints; for RLlib pass --vs-env ENV")
    other = _variant(kind, spec)
    bases = [p for p in type(kind).path_names]
    names = {f"{p}{SUFFIX}": p for p in bases}
    label = env_label(spec)
    own_build, own_explore, own_num_envs = kind.build_path, kind.default_explore, getattr(kind, "num_envs", None)

    def build_path(name: str, explore: bool) -> InferencePath:
        if name not in names:
            return own_build(name, explore)
        path: Any = other.build_path(names[name], explore)
        path.name, path.vs_kind, path.vs_base = name, other, names[name]
        path.description = f"{path.description} (on --vs-env {label})"
        return path

    kind.path_names = (*kind.path_names, *names)
    kind.vs_env_kind = other
    kind.build_path = build_path
    kind.default_explore = lambda name: own_explore(names.get(name, name))
    if own_num_envs is not None:
        kind.num_envs = lambda name: own_num_envs(names.get(name, name))
    if not spec.paths:
        first = kind.default_paths[1]
        kind.default_paths = (first, f"{first}{SUFFIX}")
    elif not any(p.endswith(SUFFIX) for p in spec.paths):
        if spec.paths[0] not in names.values():
            raise BadInput(f"--vs-env runs the first path on the second env, but {spec.paths[0]!r} is not one of "
                           f"the kind's own paths ({', '.join(bases)}); name it as P{SUFFIX} in --paths")
        spec.paths = [*spec.paths, f"{spec.paths[0]}{SUFFIX}"]
    return kind
