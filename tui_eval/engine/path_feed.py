"""The SeedFeed the engine gives each path: its seeds come from the engine's schedule, and a path with
remote workers reports through it what the engine must know (seeds never started, a worker lost)."""

from __future__ import annotations

from typing import Protocol

from tui_eval.feed import Heartbeat, Seed
from tui_eval.frames.hub import FrameHub


class Schedule(Protocol):
    """What a feed needs of the engine (`tui_eval.engine.core.Engine` is one)."""

    heartbeat: Heartbeat
    frames: FrameHub

    @property
    def stop_requested(self) -> bool: ...

    def next_seed(self, name: str) -> Seed | None: ...

    def give_back(self, name: str, seeds: list[Seed]) -> None: ...

    def worker_lost(self, name: str, message: str, details: str = "") -> bool: ...

    def notice(self, name: str, message: str) -> None: ...


class PathFeed:
    """The SeedFeed (tui_eval.feed) of one path: its seeds come from the engine's schedule."""

    def __init__(self, engine: Schedule, name: str):
        self._engine = engine
        self._name = name
        self.heartbeat = engine.heartbeat
        self.frames = engine.frames.tap(name)  # the env shown in a frame view sends its frames here

    def take(self) -> Seed | None:
        return self._engine.next_seed(self._name)

    @property
    def cancelled(self) -> bool:
        return self._engine.stop_requested

    def give_back(self, seeds: list[Seed]) -> None:
        """Seeds taken but never started (a remote worker's queue at pause): the engine's to hand out again."""
        self._engine.give_back(self._name, seeds)

    def worker_lost(self, message: str, details: str = "") -> bool:
        """One of the path's remote workers died and is replaced (its seeds run again); True: give up."""
        return self._engine.worker_lost(self._name, message, details)

    def notice(self, message: str) -> None:
        """A note for the user and the run's log, no failure (a worker is back, or waits for room)."""
        self._engine.notice(self._name, message)
