"""The SeedFeed the engine gives each path: its seeds come from the engine's schedule, and a path with
remote workers reports through it what the engine must know (seeds never started, a worker lost)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_eval.events import PathNotice
from tui_eval.feed import Seed

if TYPE_CHECKING:
    from tui_eval.engine import Engine


class PathFeed:
    """The SeedFeed (tui_eval.feed) of one path: its seeds come from the engine's schedule."""

    def __init__(self, engine: Engine, name: str):
        self._engine = engine
        self._name = name
        self.heartbeat = engine.heartbeat
        self.frames = engine.frames.tap(name)  # the env shown in a frame view sends its frames here

    def take(self) -> Seed | None:
        return self._engine._next_seed(self._name)

    @property
    def cancelled(self) -> bool:
        return self._engine._stopping

    def give_back(self, seeds: list[Seed]) -> None:
        """Seeds taken but never started (a remote worker's queue at pause): the engine's to hand out again."""
        self._engine._give_back(self._name, seeds)

    def worker_lost(self, message: str, details: str = "") -> bool:
        """One of the path's remote workers died and is replaced (its seeds run again); True: give up."""
        return self._engine._report_failure(self._name, message, details)

    def notice(self, message: str) -> None:
        """A note for the user and the run's log, no failure (a worker is back, or waits for room)."""
        self._engine._publish(PathNotice(self._name, message))
