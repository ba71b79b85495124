"""What the engine tells its subscribers (the app, the headless view). Plain data, no behaviour."""

from __future__ import annotations

from dataclasses import dataclass

from tui_eval.spec import EpisodeRecord, SeedBlock


@dataclass(frozen=True, slots=True)
class EpisodeFinished:
    record: EpisodeRecord


@dataclass(frozen=True, slots=True)
class PathFailed:
    """A path's worker raised; it is restarted unless `gave_up`."""

    path: str
    message: str
    restarts: int
    gave_up: bool


@dataclass(frozen=True, slots=True)
class PathFinished:
    path: str


@dataclass(frozen=True, slots=True)
class StateChanged:
    state: str  # "running" | "paused" | "stopping" | "done"


@dataclass(frozen=True, slots=True)
class BlockStarted:
    index: int
    block: SeedBlock
    reason: str


Event = EpisodeFinished | PathFailed | PathFinished | StateChanged | BlockStarted
