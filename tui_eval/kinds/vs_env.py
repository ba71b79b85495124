"""`--vs-env ENV` / `--vs-env-config JSON` (or a kind's own option naming a second env): sim-to-sim parity.

The run's first path's policy also runs on a second env (another simulator, a randomised variant,
another time limit), on the same paired seeds, as path `<path>@vs-env`. Any built-in path P of the
kind, and any `--path NAME=MODULE:FACTORY` loop, can be named `P@vs-env` in `--paths` (a loop on the
second env gets its single env from that env's recipe); without `--paths` the run is `P,P@vs-env` with P the
kind's second default path (the deployed policy), as `--vs` picks.
`--vs-env-config` alone keeps the env and changes its kwargs; with the same env id as the checkpoint's,
the checkpoint's env_config is kept and updated.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput
from tui_eval.integrations.base import CheckpointKind, PathEntry, borrowed_entry
from tui_eval.paths.base import InferencePath

SUFFIX = "@vs-env"


def env_label(spec: RunSpec, kind: CheckpointKind) -> str:
    own = kind.other_env_option(spec)
    if own:
        return own
    parts = [spec.vs_env or "the same env"]
    if spec.vs_env_config:
        parts.append(json.dumps(spec.vs_env_config, sort_keys=True))
    return " ".join(parts)


def attach_vs_env(kind: Any, spec: RunSpec) -> CheckpointKind:
    """Make `P@vs-env` buildable by `kind` for each of its built-in paths P; settle the run's paths."""
    if not (spec.vs_env or spec.vs_env_config or kind.other_env_option(spec)):
        return kind
    other = kind.on_other_env(spec)
    bases = list(kind.own_path_names)
    names = {f"{p}{SUFFIX}": p for p in bases}
    for name, base in names.items():
        kind.catalog.add(borrowed_entry(other, base, name, f"on --vs-env {env_label(spec, kind)}"))
    customs = getattr(kind, "custom_factories", {})
    for name, (custom, factory) in customs.items():
        kind.catalog.add(_custom_vs_env_entry(kind, other, name, custom, factory, env_label(spec, kind)))
    kind.vs_env_kind = other
    if not spec.paths:
        first = kind.default_paths[1]
        kind.default_paths = (first, f"{first}{SUFFIX}")
    elif not any(p.endswith(SUFFIX) for p in spec.paths):
        if spec.paths[0] not in (*bases, *customs):
            raise BadInput(f"--vs-env runs the first path on the second env, but {spec.paths[0]!r} is not one of "
                           f"the run's paths ({', '.join((*bases, *customs))}); name it as P{SUFFIX} in --paths")
        spec.paths = [*spec.paths, f"{spec.paths[0]}{SUFFIX}"]
    return kind


def _custom_vs_env_entry(kind: CheckpointKind, other: CheckpointKind, base: str, custom: Any, factory: Any,
                         label: str) -> PathEntry:
    """Path `base@vs-env`: the `--path` loop `base` (its factory called again) on the second env's single env."""
    from tui_eval.kinds.extra import build_custom

    name = f"{base}{SUFFIX}"

    def build(explore: bool) -> InferencePath:
        path: Any = build_custom(other, custom, explore, factory)
        path.name, path.vs_kind, path.vs_base = name, other, base
        path.description = f"{path.description} (on --vs-env {label})"
        return path

    return replace(kind.catalog[base], name=name, build=build)
