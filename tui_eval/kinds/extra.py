"""`--path` and `--vs`: the paths a kind builds besides its own.

`attach_extra_paths(kind, spec, load_kind)` adds to a loaded kind the custom paths (`--path NAME=MODULE:FACTORY`,
see `tui_eval/paths/custom.py`) and, with `--vs OTHER_CKPT`, the other checkpoint's paths: `vs` (its
kind's second default path, e.g. `connectors` for RLlib, `jit` for rsl_rl) and `P@vs` for each of its
paths P, on the same paired seeds. Without `--paths`, `--vs` runs (second default path, `vs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput, first_line
from tui_eval.integrations.base import CheckpointKind, PathEntry, borrowed_entry
from tui_eval.paths.custom import CustomPath, CustomSpec

KindLoader = Callable[[RunSpec], CheckpointKind]

VS = "vs"


def build_custom(kind, custom: CustomSpec, explore: bool, factory: Callable[..., Any] | None = None) -> CustomPath:
    """The `--path` loop `custom` on `kind`'s env (the kind's `custom_path`), its factory called with `explore`."""
    spec: RunSpec = kind.spec
    factory = factory or custom.load()

    def make(explore: bool) -> Any:
        try:
            target = factory(str(kind.checkpoint), explore=explore, device=spec.device)
        except (Exception, SystemExit) as exc:  # the user's factory may raise anything, or exit
            raise BadInput(f"--path {custom.name}: {custom.module}:{custom.factory}(checkpoint, explore=..., "
                           f"device=...) raised {first_line(exc)}") from None
        if not callable(target) and not callable(getattr(target, "act", None)):
            raise BadInput(f"--path {custom.name}: {custom.factory} returned {type(target).__name__}; return a "
                           "run_episode(env) callable or an object with act(obs)")
        return target

    return kind.custom_path(name=custom.name, target=make(explore), explore=explore, success_key=spec.success_key,
                            step_timeout=spec.step_timeout, source=f"{custom.module}:{custom.factory}", remake=make)


def _vs_entries(kind: CheckpointKind, spec: RunSpec, load_kind: KindLoader) -> tuple[CheckpointKind, list[PathEntry]]:
    """The other checkpoint's kind (read by `load_kind`), and entries for `vs` and `P@vs`."""
    assert spec.vs is not None
    try:
        other = load_kind(replace(spec, checkpoint=spec.vs, paths=[], custom_paths=[], vs=None))
    except BadInput as exc:  # say which of the two checkpoints the line is about
        raise BadInput(f"--vs {spec.vs}: {exc}") from None
    if other.name != kind.name:
        raise BadInput(f"--vs {spec.vs} is a {other.name} checkpoint, {spec.checkpoint} a {kind.name} one; "
                       "compare checkpoints of the same kind")
    kind.check_vs(other)

    def vs_entry(name: str, base: str) -> PathEntry:
        return borrowed_entry(other, base, name, f"of --vs {other.checkpoint}", ", of --vs")

    entries = [vs_entry(VS, other.default_paths[1])]
    entries += [vs_entry(f"{base}@{VS}", base) for base in other.own_path_names]
    return other, entries


def _custom_entry(kind: CheckpointKind, custom: CustomSpec, factory: Callable[..., Any]) -> PathEntry:
    # the factory gets explore=False by default: the deterministic policy, as RLlib's inference example
    return PathEntry(custom.name, lambda explore: build_custom(kind, custom, explore, factory), lambda: False,
                     "tui-eval's default for --path (explore=False)", lambda: (1, "custom path: one env at a time"))


def attach_extra_paths(kind: CheckpointKind, spec: RunSpec, load_kind: KindLoader) -> CheckpointKind:
    """Add `--path` and `--vs` paths to `kind`'s catalog; `load_kind` reads the `--vs` checkpoint
    (`tui_eval.kinds.load_kind`)."""
    customs = [CustomSpec.parse(text) for text in spec.custom_paths]
    kind.custom_factories = {}
    for custom in customs:
        if custom.name in kind.catalog:
            raise BadInput(f"--path {custom.name}: that name is taken; choose another")
        factory = custom.load()  # while planning: a wrong module or name is one line before anything loads
        kind.catalog.add(_custom_entry(kind, custom, factory))
        kind.custom_factories[custom.name] = (custom, factory)  # for its `NAME@vs-env` twin
    if spec.vs:
        other, entries = _vs_entries(kind, spec, load_kind)
        for entry in entries:
            kind.catalog.add(entry)
        kind.vs_kind = other
        if not spec.paths:
            kind.default_paths = (kind.default_paths[1], VS)
    return kind
