"""A sweep's rounds: every checkpoint's path built once, the same held-out seeds round by round for every
checkpoint still in the race, the elimination after each round, and the summary (`--json`'s `sweep`)."""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput
from tui_eval.integrations.base import Candidate
from tui_eval.paths.base import InferencePath, close_quietly
from tui_eval.records import EpisodeRecord
from tui_eval.sweep.elimination import BEST, BUDGET, INDISTINGUISHABLE, STOPPED, Arm, Elimination, mean_cs

ROUND = 10  # seeds per round (every surviving checkpoint plays each)


class RoundSeeds:
    """A SeedFeed handing out one round's seeds (nobody watches its steps); it waits while the sweep is paused
    and is cancelled when the sweep stops."""

    heartbeat = None

    def __init__(self, seeds: list[int], settings: Race):
        self.left, self.settings = [(s, 0) for s in reversed(seeds)], settings

    @property
    def cancelled(self) -> bool:
        return self.settings.stop.is_set()

    def take(self) -> tuple[int, int] | None:
        while self.settings.paused.is_set() and not self.settings.stop.is_set():
            time.sleep(0.05)
        return self.left.pop() if self.left and not self.settings.stop.is_set() else None


@dataclass
class Entrant:
    label: str
    candidate: Candidate
    path: InferencePath
    kind_name: str


def labels(candidates: list[Candidate]) -> list[str]:
    """Short unique names: the checkpoint's own name, with its trial's where two trials share it."""
    names = [c.path.name for c in candidates]
    return [f"{c.path.parent.name}/{c.path.name}" if names.count(c.path.name) > 1 else c.path.name
            for c in candidates]


def enter(spec: RunSpec, candidates: list[Candidate], load_kind: Callable[[RunSpec], Any]) -> tuple[list[Entrant], Any]:
    """Each candidate's path, built (loaded) once: in this process, or with `--workers N` (or a cluster named) in
    N Ray actors per checkpoint; and the first candidate's kind (seeds, the path's name)."""
    entrants: list[Entrant] = []
    first = None
    if spec.on_ray:
        from tui_eval.cluster.connect import connect

        connect(spec, actors=spec.workers * len(candidates))
    try:
        for label, candidate in zip(labels(candidates), candidates):
            own = dataclasses.replace(spec, checkpoint=str(candidate.path), paths=[])
            try:
                kind = load_kind(own)  # read offline here: its seeds, its sweep path, its explore default
            except BadInput as exc:  # say which checkpoint of the run the line is about
                raise BadInput(f"{label}: {exc}") from None
            first = first or kind
            if kind.name != first.name:
                raise BadInput(f"{label} is a {kind.name} checkpoint and {entrants[0].label if entrants else label} a "
                               f"{first.name} one; a sweep compares checkpoints of one kind")
            name = spec.paths[0] if spec.paths else kind.sweep_path()[0]
            explore = spec.explore.get(name, kind.default_explore(name))
            entrants.append(Entrant(label, candidate, _build(own, kind, name, explore, label), kind.name))
    except BaseException:
        for entrant in entrants:
            close_quietly(entrant.path)
        raise
    return entrants, first


def _build(spec: RunSpec, kind: Any, name: str, explore: bool, label: str) -> InferencePath:
    if not spec.on_ray:
        return kind.build_path(name, explore)
    from tui_eval.cluster.build import build_remote_path

    return build_remote_path(dataclasses.replace(spec, paths=[name]), name, explore, spec.workers,
                             label=f"sweep-{label}")


@dataclass
class Race:
    """A sweep's settings: the seeds from `start`, `round_size` per round, `budget` episodes in all; `paused`
    holds the next episode back, `stop` ends the sweep."""

    start: int
    budget: int
    alpha: float
    margin: float | None
    round_size: int = ROUND
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)
    paused: threading.Event = dataclasses.field(default_factory=threading.Event)

    def seeds(self, round_no: int) -> list[int]:
        """Round `round_no`'s seeds (rounds count from 1)."""
        first = self.start + (round_no - 1) * self.round_size
        return list(range(first, first + self.round_size))


Played = Callable[[str, int, EpisodeRecord], None]  # (checkpoint, round, episode) as each episode ends


def race(entrants: list[Entrant], settings: Race, after_round: Callable[[Elimination], None] = lambda e: None,
         on_episode: Played = lambda name, round_no, record: None,
         earlier: Iterable[EpisodeRecord] = ()) -> Elimination:
    """Rounds until the elimination ends, the next round would pass the budget, or `settings.stop` is set (the
    round in progress is then dropped: only whole rounds are compared). `earlier`: episodes a previous process
    of this sweep finished (`path` the checkpoint, `block` the round); they are counted, not played again."""
    e = Elimination([x.label for x in entrants], alpha=settings.alpha, margin=settings.margin)
    by_label = {x.label: x for x in entrants}
    kept: dict[tuple[int, str], dict[int, EpisodeRecord]] = {}
    for record in earlier:
        kept.setdefault((record.block, record.path), {})[record.seed] = record
    round_no = 0
    while e.outcome is None and e.spent() + len(e.alive()) * settings.round_size <= settings.budget \
            and not settings.stop.is_set():
        round_no += 1
        seeds = settings.seeds(round_no)
        played: list[tuple[str, EpisodeRecord]] = []
        for arm in e.alive():
            done = kept.get((round_no, arm.name), {})
            played += [(arm.name, done[s]) for s in seeds if s in done]
            missing = [s for s in seeds if s not in done]
            if missing:
                by_label[arm.name].path.run(RoundSeeds(missing, settings),
                                            _collect(played, arm.name, round_no, on_episode))
        if settings.stop.is_set():
            break
        for name, r in played:
            e.record(name, r.seed, r.ret, not r.invalid, r.success)
        e.step()
        after_round(e)
    if e.outcome is None:
        e.outcome = STOPPED if settings.stop.is_set() else BUDGET
    return e


def _collect(played: list[tuple[str, EpisodeRecord]], name: str, round_no: int,
             on_episode: Played) -> Callable[[EpisodeRecord], None]:
    def collect(record: EpisodeRecord) -> None:
        played.append((name, record))
        on_episode(name, round_no, record)

    return collect


def summary(e: Elimination, entrants: list[Entrant], settings: Race, about: dict[str, Any]) -> dict[str, Any]:
    """The sweep's `--json` (docs/contract.md): its status, the seeds so far, every checkpoint's row (ranked), the
    best or the indistinguishable set, training's pick and its held-out rank; `about` (the run swept, the path,
    the log) merged in."""
    by_label = {x.label: x for x in entrants}
    ranking = e.ranking()
    leader = ranking[0]
    rows = [_row(rank, arm, by_label[arm.name], e, leader) for rank, arm in enumerate(ranking, 1)]
    pick = training_pick(entrants)
    rank_of = {row["checkpoint"]: row["rank"] for row in rows}
    return {**about, "status": STATUS_OF.get(e.outcome or "", "running"),
            "seeds": [settings.start, settings.start + e.rounds * settings.round_size],
            "checkpoints": rows, "best": e.alive()[0].name if e.outcome == BEST else None,
            "indistinguishable": [a.name for a in e.alive()] if e.outcome == INDISTINGUISHABLE else [],
            "training_pick": None if pick is None else {"checkpoint": pick[0], "held_out_rank": rank_of[pick[0]],
                                                        "by": pick[1]},
            "rank_correlation": rank_correlation(rows), "outcome": e.outcome, "leader": leader.name,
            "alpha": e.alpha, "alpha_per_pair": e.alpha_pair, "rounds": e.rounds, "episodes": e.spent(),
            "budget": settings.budget}


STATUS_OF = {BEST: "done", INDISTINGUISHABLE: "done", BUDGET: "done", STOPPED: "stopped"}


def _row(rank: int, arm: Arm, entrant: Entrant, e: Elimination, leader: Arm) -> dict[str, Any]:
    iv, paired = e.interval(arm.name, leader.name) if arm is not leader else (None, 0)
    c = entrant.candidate
    return {"checkpoint": arm.name, "iteration": c.iteration, "training_metric": c.metric, "episodes": arm.episodes,
            "mean": arm.mean, "cs95": _pair(mean_cs(arm)), "success_rate": arm.success_rate,
            "invalid": arm.invalid, "eliminated_at": arm.eliminated_at, "eliminated_by": arm.eliminated_by,
            "rank": rank, "path": str(c.path), "training_metric_name": c.metric_name,
            "vs_leader_cs": _pair(iv), "paired_with_leader": paired}


def _pair(iv: tuple[float, float] | None) -> list[float] | None:
    return None if iv is None else [iv[0], iv[1]]


def training_pick(entrants: list[Entrant]) -> tuple[str, str] | None:
    """What training would have deployed: the highest training metric where the kind picks so (Tune's
    get_best_result), else the newest checkpoint (an rsl_rl user's model_<last>.pt)."""
    scored = [x for x in entrants if x.candidate.picked_by == "metric" and x.candidate.metric is not None
              and math.isfinite(x.candidate.metric)]
    if scored:
        best = max(scored, key=lambda x: x.candidate.metric or 0.0)
        return best.label, f"highest {best.candidate.metric_name}"
    dated = [x for x in entrants if x.candidate.iteration is not None]
    if dated:
        return max(dated, key=lambda x: x.candidate.iteration or 0).label, "the newest checkpoint"
    return None


def rank_correlation(rows: list[dict[str, Any]]) -> float | None:
    """Spearman's rank correlation of the training metric (else the iteration) with the held-out mean."""
    from scipy.stats import spearmanr

    key = "training_metric" if any(r["training_metric"] is not None for r in rows) else "iteration"
    pairs = [(r[key], r["mean"]) for r in rows if r[key] is not None and r["mean"] is not None]
    if len(pairs) < 3 or len({p[0] for p in pairs}) < 2 or len({p[1] for p in pairs}) < 2:
        return None
    rho = spearmanr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
    return None if not math.isfinite(rho) else float(rho)


class Board:
    """The sweep's board (`--json`'s summary) after a round or at the end, written to its log as it is made:
    what `attach`, `ls` and the app read. `record`: the sweep's SweepRecord (record.py); `about`: what the sweep
    is (the run swept, the path, the log)."""

    def __init__(self, entrants: list[Entrant], settings: Race, about: dict[str, Any], record: Any):
        self.entrants, self.settings, self.about, self.record = entrants, settings, about, record

    def __call__(self, e: Elimination) -> dict[str, Any]:
        result = summary(e, self.entrants, self.settings, self.about)
        self.record.board(result)
        return result
