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

import gymnasium as gym

from tui_eval.errors import first_line
from tui_eval.kinds.base import CheckpointKind
from tui_eval.paths.base import InferencePath
from tui_eval.paths.custom import CustomPath, CustomSpec
from tui_eval.spec import BadInput, RunSpec

KindLoader = Callable[[RunSpec], CheckpointKind]

VS = "vs"


def single_env_factory(kind) -> Callable[[], gym.Env]:
    """One env of the kind's env, as the user's own loop would make it."""
    recipe = getattr(kind, "env", None)
    if recipe is not None and hasattr(recipe, "make_one"):  # RLlib: the main config's env, RLlib's way
        return recipe.make_one
    if getattr(kind, "vecenv", None):
        raise BadInput("a custom path needs a Gymnasium env; this run's env comes from --vecenv (an rsl_rl VecEnv): "
                       "pass --env ID for a Gymnasium env, or compare the built-in paths")
    env_id, env_config = getattr(kind, "env_id", None), dict(getattr(kind, "env_config", {}) or {})
    if not env_id:
        raise BadInput(f"a custom path needs a Gymnasium env, but the {kind.name} checkpoint names none; pass --env ID")
    from tui_eval.envs import check_env_id

    check_env_id(env_id)
    return lambda: gym.make(env_id, **env_config)


def build_custom(kind, custom: CustomSpec, explore: bool, factory: Callable[..., Any] | None = None) -> CustomPath:
    spec: RunSpec = kind.spec
    factory = factory or custom.load()

    def make(explore: bool) -> Any:
        try:
            target = factory(str(kind.checkpoint), explore=explore, device=spec.device)
        except Exception as exc:
            raise BadInput(f"--path {custom.name}: {custom.module}:{custom.factory}(checkpoint, explore=..., "
                           f"device=...) raised {first_line(exc)}") from None
        if not callable(target) and not callable(getattr(target, "act", None)):
            raise BadInput(f"--path {custom.name}: {custom.factory} returned {type(target).__name__}; return a "
                           "run_episode(env) callable or an object with act(obs)")
        return target

    return CustomPath(name=custom.name, target=make(explore), make_env=single_env_factory(kind), explore=explore,
                      success_key=spec.success_key, step_timeout=spec.step_timeout,
                      source=f"{custom.module}:{custom.factory}", remake=make)


def _vs_builders(kind: Any, spec: RunSpec, load_kind: KindLoader,
                 ) -> tuple[CheckpointKind, dict[str, Callable[[bool], InferencePath]]]:
    """The other checkpoint's kind (read by `load_kind`), and builders for `vs` and `P@vs`."""
    assert spec.vs is not None
    other = load_kind(replace(spec, checkpoint=spec.vs, paths=[], custom_paths=[], vs=None))
    if other.name != kind.name:
        raise BadInput(f"--vs {spec.vs} is a {other.name} checkpoint, {spec.checkpoint} a {kind.name} one; "
                       "compare checkpoints of the same kind")

    def build_vs(name: str, base: str) -> Callable[[bool], InferencePath]:
        def build(explore: bool) -> InferencePath:
            path: Any = other.build_path(base, explore)
            path.name, path.vs_kind, path.vs_base = name, other, base
            path.description = f"{path.description} (of --vs {other.checkpoint})"
            return path
        return build

    builders = {VS: build_vs(VS, other.default_paths[1])}
    builders.update({f"{base}@{VS}": build_vs(f"{base}@{VS}", base) for base in other.path_names})
    return other, builders


def vs_base(other: CheckpointKind, name: str) -> str:
    """The other checkpoint's path behind `vs` / `P@vs`."""
    return other.default_paths[1] if name == VS else name.rpartition("@")[0]


def _custom_builder(kind: Any, custom: CustomSpec, factory: Callable[..., Any]) -> Callable[[bool], InferencePath]:
    return lambda explore: build_custom(kind, custom, explore, factory)


def attach_extra_paths(kind: Any, spec: RunSpec, load_kind: KindLoader) -> CheckpointKind:
    """Make `--path` and `--vs` paths buildable by `kind` (its path names, explore default, build_path);
    `load_kind` reads the `--vs` checkpoint (`tui_eval.kinds.load_kind`)."""
    customs = [CustomSpec.parse(text) for text in spec.custom_paths]
    if not customs and not spec.vs:
        return kind
    builders: dict[str, Callable[[bool], InferencePath]] = {}
    for custom in customs:
        if custom.name in kind.path_names or custom.name in builders:
            raise BadInput(f"--path {custom.name}: that name is taken; choose another")
        factory = custom.load()  # while planning: a wrong module or name is one line before anything loads
        builders[custom.name] = _custom_builder(kind, custom, factory)
    other = None
    if spec.vs:
        other, vs = _vs_builders(kind, spec, load_kind)
        builders.update(vs)
        kind.vs_kind = other
        if not spec.paths:
            kind.default_paths = (kind.default_paths[1], VS)
    own_build, own_explore, own_num_envs = kind.build_path, kind.default_explore, getattr(kind, "num_envs", None)
    kind.path_names = (*kind.path_names, *builders)
    kind.custom_paths = {c.name: c for c in customs}

    def build_path(name: str, explore: bool) -> InferencePath:
        return builders[name](explore) if name in builders else own_build(name, explore)

    def default_explore(name: str) -> bool:
        if name in kind.custom_paths:
            return False  # the factory gets explore=False: the deterministic policy, as RLlib's inference example
        return other.default_explore(vs_base(other, name)) if other is not None and name in builders else \
            own_explore(name)

    def num_envs(name: str) -> tuple[int, str]:
        if name in kind.custom_paths:
            return 1, "custom path: one env at a time"
        assert own_num_envs is not None
        return own_num_envs(vs_base(other, name) if other is not None and name in builders else name)

    kind.build_path, kind.default_explore = build_path, default_explore
    if own_num_envs is not None:
        kind.num_envs = num_envs
    return kind
