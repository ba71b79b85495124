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

How a kind builds these paths (and `--vs`) is in `tui_eval/kinds/extra.py`.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from tui_eval.envs.guard import INVALID_KEY, SEED_KEY, SUCCESS_KEY, GuardedEnv
from tui_eval.errors import BadInput, first_line
from tui_eval.feed import FeedRelay, Seed, SeedFeed
from tui_eval.paths.base import NO_LIBRARY, Emit, InferencePath, LibraryParts, LiveParts
from tui_eval.paths.rerun import Side, Trace
from tui_eval.records import EpisodeRecord


@dataclass(frozen=True)
class CustomSpec:
    name: str
    module: str
    factory: str

    @classmethod
    def parse(cls, text: str) -> CustomSpec:
        name, sep, target = text.partition("=")
        module, colon, factory = target.rpartition(":")
        name = name.strip()
        if not sep or not colon or not name or not module or not factory.isidentifier():
            raise BadInput(f"--path expects NAME=MODULE:FACTORY (e.g. --path mine=my_loop.py:make_policy), "
                           f"got {text!r}")
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
                if spec is None or spec.loader is None:
                    raise BadInput(f"--path {self.name}: {self.module!r} is not a Python file")
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


class CurrentSeed(FeedRelay):
    """The SeedFeed of a custom path's one env: every reset gets the seed of the episode being played,
    whatever seed the user's loop passes (the heartbeat and cancel flag are the run's, as relayed)."""

    def __init__(self) -> None:
        super().__init__()
        self.seed: Seed | None = None

    def take(self) -> Seed | None:
        return self.seed


class EpisodeRecorder(gym.Wrapper):
    """Outside GuardedEnv: counts the first episode after each reset and keeps the actions sent to the env.

    Rewards and flags are GuardedEnv's (tui-eval's), so a user loop cannot misreport them.
    """

    def __init__(self, env: gym.Env, keep_actions: bool = False):
        super().__init__(env)
        self.keep_actions = keep_actions
        self.begin()

    def begin(self) -> None:
        self.ret, self.length, self.done = 0.0, 0, False
        self.last_info: dict[str, Any] = {}
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
                 remake: Callable[[bool], Any] | None = None, library: LibraryParts = NO_LIBRARY):
        self.name = name
        self.library = library  # how the doctor finds the library's parts inside the user's object
        self.remake = remake  # explore -> a new target (the factory called again), for set_explore
        self.explore = explore
        self.target = target
        self.form = "episode" if not hasattr(target, "act") and callable(target) else "act"
        self.seed_feed = CurrentSeed()
        self.guarded = GuardedEnv(make_env(), feed=self.seed_feed, success_key=success_key, step_timeout=step_timeout)
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
        self.seed_feed.seed = (seed, block)
        self.env.keep_actions = keep_actions
        self.env.begin()
        play_target(self.target, self.form, self.env)
        return self.env

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        self.seed_feed.feed = feed  # the run's heartbeat and cancel flag
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

    def live_parts(self) -> LiveParts:
        """The library's module and pipelines found inside the user's object; the path's own env, as it is."""
        found = self.library.find(self.target)
        inner = self.guarded.env
        return LiveParts("custom", found["module"], found["env_to_module"], found["module_to_env"],
                         make_env=lambda: inner, explore=self.explore, library=self.library)

    def keeps_state(self) -> bool:
        from tui_eval.paths.rerun import holds_recurrent_module

        return holds_recurrent_module(self.target)

    def replay(self, seed: int) -> Trace:
        from tui_eval.paths.custom_rerun import replay_custom

        return replay_custom(self, seed)

    def rerun(self, trace: Trace) -> Side:
        from tui_eval.paths.custom_rerun import custom_side

        return custom_side(self, trace)

    def close(self) -> None:
        self.env.close()
        close = getattr(self.target, "close", None)
        if callable(close):
            close()


def play_target(target, form: str, env, next_obs=None) -> None:
    """One episode of a user's `run_episode(env)` (form "episode") or `act(obs)` policy on `env`, which says
    when it is `done`; `next_obs(step)`: the observation the policy acts on next (default: the step's)."""
    if form == "episode":
        target(env)
        return
    if hasattr(target, "reset"):
        target.reset()
    obs, _ = env.reset()
    while not env.done:
        step = env.step(target.act(obs))
        obs = step[0] if next_obs is None else next_obs(step)
