"""A FAKE inference path and checkpoint kind that play scripted episodes: no policy, no env, no RLlib.

Why a fake: the engine's scheduling (seed cursors, pause, resample, episode limits, a path loaded afresh
after a crash, the watchdog of frozen steps) and the app's layout and keys do not depend on what runs
an episode, only on when records arrive and how a path fails. A real RLlib checkpoint makes each such
test pay seconds of restoring a policy and leaves timing to a real env; a script says exactly when an
episode ends, which run call crashes and which step never returns. What only real parts prove (real
`Algorithm.evaluate()`, connector pipelines, rsl_rl runners, real envs that break) is tested on them in
tests/integration/.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_eval.config.spec import RunSpec, SeedBlock
from tui_eval.feed import SeedFeed
from tui_eval.integrations.base import CheckpointKind, PathEntry
from tui_eval.paths.base import Emit, InferencePath
from tui_eval.records import EpisodeRecord
from tui_eval.session import Plan


def default_return(seed: int, explore: bool) -> float:
    return float(seed % 10 + (0.5 if explore else 0.0))


@dataclass
class Script:
    """How one path's episodes go; shared by every FakePath built from it (a path loaded afresh goes on
    with the same script and the same counters)."""

    num_envs: int = 2  # episodes in flight at once, as a vector env of that many worlds
    length: int = 10  # steps per episode
    step_s: float = 0.002  # wall seconds per step of each world
    ret: Callable[[int, bool], float] = default_return  # (seed, explore) -> return
    modules: Callable[[int], tuple] | None = None  # seed -> ((module, return, agent steps), ...): multi-agent
    invalid: frozenset[int] = frozenset()  # seeds whose world breaks (an invalid episode, not a failure)
    crash_on_runs: frozenset[int] = frozenset()  # run() calls (1-based, over every instance) that raise
    crash_after_taking: int = 2  # seeds such a call takes before it raises
    crash_message: str = "worker lost"
    hang: frozenset[int] = frozenset()  # seeds whose step `hang_at_step` blocks until `release` is set
    hang_at_step: int = 5
    release: threading.Event = field(default_factory=threading.Event)
    runs: int = 0  # run() calls so far
    built: int = 0  # FakePaths built from this script


class FakePath(InferencePath):
    """A FAKE path (see the module docstring): each world steps a scripted episode, noting its steps in
    the feed's heartbeat as real envs do, so the engine's watchdog sees a step that never returns."""

    def __init__(self, name: str, script: Script, explore: bool = False):
        self.name = name
        self.script = script
        self.explore = explore
        self.description = f"fake: {script.num_envs} scripted worlds, {script.length} steps each"
        self.closed = False
        script.built += 1

    def close(self) -> None:
        self.closed = True

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        script = self.script
        script.runs += 1
        if script.runs in script.crash_on_runs:
            for _ in range(script.crash_after_taking):
                feed.take()
            raise RuntimeError(script.crash_message)
        worlds: list[list[int] | None] = [None] * script.num_envs  # [seed, block, step, started] per world
        while True:
            for i, world in enumerate(worlds):
                if world is None and not feed.cancelled:
                    taken = feed.take()
                    worlds[i] = None if taken is None else [taken[0], taken[1], 0, time.perf_counter()]
            if feed.cancelled or not any(worlds):
                return
            for i, world in enumerate(worlds):
                if world is not None and self._step(feed, world):
                    emit(self._record(world))
                    worlds[i] = None

    def _step(self, feed: SeedFeed, world: list) -> bool:
        """One step of one world; True when its episode ended."""
        seed, block, step, _ = world
        heartbeat = getattr(feed, "heartbeat", None)
        if heartbeat is not None:
            heartbeat.step_started(seed, block)
        if seed in self.script.hang and step == self.script.hang_at_step:
            self.script.release.wait()  # a step that never returns (until the test releases it)
        time.sleep(self.script.step_s)
        if heartbeat is not None:
            heartbeat.step_ended()
        world[2] = step + 1
        return world[2] >= self.script.length

    def _record(self, world: list) -> EpisodeRecord:
        seed, block, length, started = world
        broken = seed in self.script.invalid
        return EpisodeRecord(path=self.name, seed=seed, ret=self.script.ret(seed, self.explore), length=length,
                             invalid=broken, reason="non-finite observation" if broken else None, block=block,
                             explore=self.explore, wall_s=time.perf_counter() - started,
                             modules=self.script.modules(seed) if self.script.modules else ())


class FakeKind(CheckpointKind):
    """A FAKE checkpoint kind (see the module docstring): it builds FakePaths from scripts, by path name."""

    name = "fake"
    recognise = classmethod(lambda cls, path: False)  # never picked for a real checkpoint

    def __init__(self, path: Path, spec: RunSpec, scripts: dict[str, Script] | None = None):
        self.checkpoint = path
        self.env_id = "FakeEnv-v0"
        self.scripts = scripts or {"evaluate": Script(), "connectors": Script()}
        names = tuple(self.scripts)
        self.default_paths = (names[0], names[-1])

    def own_paths(self) -> list[PathEntry]:
        return [PathEntry(name, build=lambda explore, name=name: FakePath(name, self.scripts[name], explore),
                          default_explore=lambda: False, explore_source="fake") for name in self.scripts]

    def describe(self) -> dict[str, str]:
        return {"algorithm": "fake", "env": "FakeEnv-v0"}

    def default_seeds(self, episodes: int | None) -> tuple[SeedBlock, str]:
        return SeedBlock(1000, None if episodes is None else 1000 + episodes), "fake"


def fake_plan(tmp_path: Path, scripts: dict[str, Script] | None = None, *, seeds: str = "100:",
              episodes: int | None = None, step_timeout: float = 30.0, name: str = "run",
              explore: dict[str, bool] | None = None, **spec_fields: Any) -> Plan:
    """The plan `session.plan_run` would make for a checkpoint of the fake kind (`spec_fields`: more
    RunSpec fields, e.g. until_decided=True)."""
    log = tmp_path / f"{name}.sqlite"
    spec_fields.setdefault("in_process", True)  # the fake kind exists in this process only
    spec = RunSpec(checkpoint=str(tmp_path / "fake_checkpoint"), episodes=episodes, step_timeout=step_timeout,
                   log=str(log), **spec_fields)
    kind = FakeKind(Path(spec.checkpoint), spec, scripts)
    paths = list(kind.path_names)
    return Plan(spec=spec, kind=kind, paths=paths, explore={p: (explore or {}).get(p, False) for p in paths},
                explore_source={p: "fake" for p in paths}, seeds=SeedBlock.parse(seeds), seeds_note="fake",
                log_path=log, facts=kind.describe())
