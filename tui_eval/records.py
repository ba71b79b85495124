"""What a run gives: each finished episode (EpisodeRecord), and the events the engine tells its subscribers (the
app, the headless run) as it goes. Plain data, no behaviour beyond reading it; it imports only the config."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from tui_eval.config.spec import SeedBlock


@dataclass(frozen=True, slots=True)
class EpisodeRecord:
    """One finished episode of one inference path.

    An invalid episode (the simulation blew up, froze or raised) is still an episode: it counts in
    the episode total and never as a success.
    """

    path: str
    seed: int
    ret: float
    length: int
    success: bool | None = None
    invalid: bool = False
    reason: str | None = None
    wall_s: float = 0.0
    block: int = 0  # index of the seed block the seed was drawn from (resample starts a new one)
    explore: bool | None = None
    #: multi-agent episodes: (module id, the module's return, its agent steps) per module, by id; `ret` is then
    #: the team return (all modules' together), or one module's under `--module`; `length` counts env steps
    modules: tuple[tuple[str, float, int], ...] = ()
    #: a batched simulator's world that ran it (its batch seed is `seed - world`); None for per-episode seeded envs
    world: int | None = None
    #: a fingerprint of the episode's first observation (envs/guard.py's start_fingerprint), where the path reads it:
    #: two records of one path with the same start, return and length under different seeds repeat one episode
    start: str | None = None
    #: the termination term that ended the episode, where the env names it (a manager-based env: `time_out`,
    #: `fell_over`, ...); None where it does not
    termination: str | None = None
    #: the episode's sum of each reward term, where the env computes its reward from named terms (mjlab, Isaac Lab)
    reward_terms: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if self.invalid and self.success:
            object.__setattr__(self, "success", False)

    def for_module(self, module_id: str) -> EpisodeRecord:
        """This episode as one module saw it: the module's return in `ret` (0 for a module no agent
        used), nothing per module."""
        ret = next((r for m, r, _ in self.modules if m == module_id), 0.0)
        return dataclasses.replace(self, ret=ret, modules=())

    def to_json(self) -> dict[str, Any]:
        """The record as in the `--json` summary's `episodes` list."""
        return {
            "path": self.path,
            "seed": self.seed,
            "return": self.ret if math.isfinite(self.ret) else None,
            "length": self.length,
            "success": self.success,
            "invalid": self.invalid,
            "reason": self.reason,
            "wall_s": self.wall_s,
            "block": self.block,
            "explore": self.explore,
            **({"modules": {m: {"return": r if math.isfinite(r) else None, "agent_steps": n}
                            for m, r, n in self.modules}} if self.modules else {}),
            **({"world": self.world, "batch_seed": self.seed - self.world} if self.world is not None else {}),
            **({"termination": self.termination} if self.termination is not None else {}),
            **({"reward_terms": {t: v if math.isfinite(v) else None for t, v in self.reward_terms}}
               if self.reward_terms else {}),
        }


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
