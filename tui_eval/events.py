"""What the engine tells its subscribers (the app, the headless view). Plain data, no behaviour."""

from __future__ import annotations

from dataclasses import dataclass

from tui_eval.config.spec import EpisodeRecord, SeedBlock


@dataclass(frozen=True, slots=True)
class EpisodeFinished:
    record: EpisodeRecord


@dataclass(frozen=True, slots=True)
class PathFailed:
    """A path failed (its policy side raised, or a world froze its worker); it is loaded afresh and goes
    on unless `gave_up`. `details` holds the traceback, for the log."""

    path: str
    message: str
    restarts: int
    gave_up: bool
    details: str = ""


@dataclass(frozen=True, slots=True)
class PathFinished:
    path: str


@dataclass(frozen=True, slots=True)
class StateChanged:
    state: str  # an EngineState from the engine; a viewer of a log also says its RunStatus, or "stale"


@dataclass(frozen=True, slots=True)
class BlockStarted:
    index: int
    block: SeedBlock
    reason: str


@dataclass(frozen=True, slots=True)
class PathNotice:
    """Something the user should know that is no failure: a Ray worker is back, or waits for room."""

    path: str
    message: str


Event = EpisodeFinished | PathFailed | PathFinished | StateChanged | BlockStarted | PathNotice
