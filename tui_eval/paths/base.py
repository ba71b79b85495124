"""What an inference path is: something that turns held-out seeds into EpisodeRecords."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Protocol

from tui_eval.spec import EpisodeRecord

Emit = Callable[[EpisodeRecord], None]


class SeedFeed(Protocol):
    """Hands a path the seeds it should start episodes with, one at a time."""

    def take(self) -> tuple[int, int] | None:
        """(seed, block) for the next episode, or None: start no new episode now (paused, stopping, done)."""

    @property
    def cancelled(self) -> bool:
        """True when the run is being stopped: abandon episodes in flight and return promptly."""


class InferencePath(ABC):
    """One way of running a checkpoint's policy.

    `run` starts an episode for every seed the feed hands out, emits a record for each finished one,
    and returns once the feed hands out nothing and no episode is in flight (or the feed is cancelled).
    The engine calls `run` again after a pause, so a path keeps its loaded policy between calls.
    """

    name: str
    explore: bool
    #: one line for the user: how this path runs the policy
    description: str = ""

    @abstractmethod
    def run(self, feed: SeedFeed, emit: Emit) -> None: ...

    def set_explore(self, explore: bool) -> None:
        self.explore = explore

    def close(self) -> None:
        """Release envs, runners, sessions."""
