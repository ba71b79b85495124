"""Custom paths: the user's own loop or policy, run as an inference path like any other.

`--path NAME=MODULE:FACTORY` (MODULE a dotted module or a `.py` file). tui-eval calls
`FACTORY(checkpoint: str, *, explore: bool, device: str)` once, and accepts what it returns:

- a callable `run_episode(env) -> None` (the *episode form*): the user's existing loop with its env
  creation taken out. It plays exactly one episode on `env`, a single Gymnasium env made by the kind's
  env recipe and wrapped by tui-eval; `env.reset()` ignores the caller's seed and uses the run's.
- an object with `act(obs) -> action` and optionally `reset()` (the *act form*): tui-eval steps one
  env at a time itself, calling `reset()` (if any) before each episode.

Returns, lengths, success and invalid always come from tui-eval's wrapper (GuardedEnv + a recorder
outside it), never from user code. The recorder also keeps the actions the loop sent to the env, which
the doctor's replay reads.

`--vs OTHER_CKPT` adds the other checkpoint's path as `vs` (its kind's second default path, e.g.
`connectors`) and `P@vs` for each of its built-in paths P, on the same paired seeds.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym

from tui_eval.envs import INVALID_KEY, SEED_KEY, SUCCESS_KEY, GuardedEnv
from tui_eval.errors import first_line
from tui_eval.paths.base import Emit, InferencePath, SeedFeed
from tui_eval.spec import BadInput, EpisodeRecord, RunSpec

VS = "vs"


@dataclass(frozen=True)
class CustomSpec:
    name: str
    module: str
    factory: str

    @classmethod
    def parse(cls, text: str) -> "CustomSpec":
        name, sep, target = text.partition("=")
        module, colon, factory = target.rpartition(":")
        name = name.strip()
        if not sep or not colon or not name or not module or not factory.isidentifier():
            raise BadInput(f"--path expects NAME=MODULE:FACTORY (e.g. --path mine=my_loop.py:make_policy), got {text!r}")
        if not all(c.isalnum() or c in "_-" for c in name):
            raise BadInput(f"--path name {name!r}: use letters, digits, '_' or '-'")
        return cls(name, module, factory)

    def load(self) -> Callable[..., Any]:
        target = Path(self.module).expanduser()
        try:
            if self.module.endswith(".py") or target.is_file():
                if not target.is_file():
                    raise BadInput(f"--path {self.name}: no such file {self.module!r}")
                spec = importlib.util.spec_from_file_location(f"tui_eval_custom_{self.name.replace('-', '_')}",
                                                              target.resolve())
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            else:
                module = importlib.import_module(self.module)
        except BadInput:
            raise
        except Exception as exc:
            raise BadInput(f"--path {self.name}: cannot import {self.module!r} ({first_line(exc)})") from None
        factory = getattr(module, self.factory, None)
        if not callable(factory):
            raise BadInput(f"--path {self.name}: {self.module!r} defines no callable {self.factory!r}")
        return factory


class EpisodeRecorder(gym.Wrapper):
    """Outside GuardedEnv: counts the first episode after each reset and keeps the actions sent to the env.

    Rewards and flags are GuardedEnv's (tui-eval's), so a user loop cannot misreport them.
    """

    def __init__(self, env: gym.Env, keep_actions: bool = False):
        super().__init__(env)
        self.keep_actions = keep_actions
        self.begin()

    def begin(self) -> None:
        self.ret, self.length, self.done, self.last_info = 0.0, 0, False, {}
        self.actions: list[Any] = []
        self.reset_called = False

    def reset(self, *, seed=None, options=None):
        if self.reset_called and self.length:  # a second episode in one call: only the first counts
            self.done = True
        self.reset_called = True
        obs, info = self.env.reset(seed=seed, options=options)
        if not self.done:
            self.last_info = info
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if not self.done:
            if self.keep_actions:
                self.actions.append(_copy(action))
            self.ret += float(reward)
            self.length += 1
            self.last_info = info
            self.done = bool(terminated or truncated)
        return obs, reward, terminated, truncated, info


def _copy(value: Any) -> Any:
    import numpy as np

    return np.array(value, copy=True)


class CustomPath(InferencePath):
    """The user's loop (episode form) or policy (act form) on one env at a time, seeded by tui-eval."""

    def __init__(self, *, name: str, target: Any, make_env: Callable[[], gym.Env], explore: bool,
                 success_key: str | None, step_timeout: float | None, source: str,
                 remake: Callable[[bool], Any] | None = None):
        self.name = name
        self.remake = remake  # explore -> a new target (the factory called again), for set_explore
        self.explore = explore
        self.target = target
        self.form = "episode" if not hasattr(target, "act") and callable(target) else "act"
        self._seed: tuple[int, int] | None = None
        self.guarded = GuardedEnv(make_env(), seed_source=lambda: self._seed, success_key=success_key,
                                  step_timeout=step_timeout)
        self.env = EpisodeRecorder(self.guarded)
        self.description = (f"custom path {source} ({'run_episode(env)' if self.form == 'episode' else 'act(obs)'}"
                            f", one env at a time; returns measured by tui-eval)")

    def set_explore(self, explore: bool) -> None:
        """The factory decides what explore means for the user's code: it is called again with the new value."""
        if explore != self.explore and self.remake is not None:
            target = self.remake(explore)
            close = getattr(self.target, "close", None)
            if callable(close):
                close()
            self.target = target
        self.explore = explore

    def play(self, seed: int, block: int = 0, keep_actions: bool = False) -> EpisodeRecorder:
        """One episode on `seed`; the recorder holds what the env saw."""
        self._seed = (seed, block)
        self.env.keep_actions = keep_actions
        self.env.begin()
        if self.form == "episode":
            self.target(self.env)
        else:
            if hasattr(self.target, "reset"):
                self.target.reset()
            obs, _ = self.env.reset()
            while not self.env.done:
                obs, *_ = self.env.step(self.target.act(obs))
        return self.env

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        while not feed.cancelled:
            taken = feed.take()
            if taken is None:
                return
            started = time.perf_counter()
            rec = self.play(*taken)
            info = rec.last_info
            reason = info.get(INVALID_KEY)
            if not rec.done and reason is None:
                reason = (f"run_episode returned before the episode ended (after {rec.length} steps)"
                          if rec.reset_called else "run_episode returned without resetting the env")
            emit(EpisodeRecord(path=self.name, seed=int(info.get(SEED_KEY, taken[0])), block=taken[1],
                               ret=rec.ret, length=rec.length, success=info.get(SUCCESS_KEY),
                               invalid=reason is not None, reason=reason,
                               wall_s=time.perf_counter() - started, explore=self.explore))

    def close(self) -> None:
        self.env.close()
        close = getattr(self.target, "close", None)
        if callable(close):
            close()


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


def attach_extra_paths(kind, spec: RunSpec):
    """Make `--path` and `--vs` paths buildable by `kind` (its path names, explore default, build_path)."""
    customs = [CustomSpec.parse(text) for text in getattr(spec, "custom_paths", []) or []]
    vs = getattr(spec, "vs", None)
    if not customs and not vs:
        return kind
    builders: dict[str, Callable[[bool], InferencePath]] = {}
    for custom in customs:
        if custom.name in kind.path_names or custom.name in builders:
            raise BadInput(f"--path {custom.name}: that name is taken; choose another")
        factory = custom.load()  # while planning: a wrong module or name is one line before anything loads
        builders[custom.name] = lambda explore, c=custom, f=factory: build_custom(kind, c, explore, f)
    other = None
    if vs:
        from tui_eval.kinds import load_kind

        other_spec = replace(spec, checkpoint=vs, paths=[], custom_paths=[], vs=None)
        other = load_kind(other_spec)
        if other.name != kind.name:
            raise BadInput(f"--vs {vs} is a {other.name} checkpoint, {spec.checkpoint} a {kind.name} one; "
                           "compare checkpoints of the same kind")
        kind.vs_kind = other

        def build_vs(name: str, base: str):
            def build(explore: bool) -> InferencePath:
                path = other.build_path(base, explore)
                path.name = name
                path.description = f"{path.description} — of --vs {other.checkpoint}"
                return path
            return build

        builders[VS] = build_vs(VS, other.default_paths[1])
        for base in other.path_names:
            builders[f"{base}@{VS}"] = build_vs(f"{base}@{VS}", base)
        if not spec.paths:
            kind.default_paths = (kind.default_paths[1], VS)
    own_build, own_explore = kind.build_path, kind.default_explore
    kind.path_names = (*kind.path_names, *builders)
    kind.custom_paths = {c.name: c for c in customs}

    def build_path(name: str, explore: bool) -> InferencePath:
        if name in builders:
            return builders[name](explore)
        return own_build(name, explore)

    def default_explore(name: str) -> bool:
        if name in kind.custom_paths:
            return False
        if other is not None and name in builders:
            return other.default_explore(other.default_paths[1] if name == VS else name.rpartition("@")[0])
        return own_explore(name)

    kind.build_path, kind.default_explore = build_path, default_explore
    if hasattr(kind, "num_envs"):
        own_num_envs = kind.num_envs

        def num_envs(name: str):
            if name in kind.custom_paths:
                return 1, "custom path: one env at a time"
            if name in builders:
                return own_num_envs(other.default_paths[1] if name == VS else name.rpartition("@")[0])
            return own_num_envs(name)

        kind.num_envs = num_envs
    return kind
