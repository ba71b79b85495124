"""What a sweep's report shows, from its log's board (`meta["sweep_result"]`, docs/contract.md "The sweep"): each
checkpoint's held-out mean with its own anytime interval against its training iteration, which were eliminated,
the best (or the leader), training's pick, and the caption (the board's own lines: outcome, training's pick, rank
correlation). No matplotlib here (figure.py draws it)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from tui_eval.errors import BadInput
from tui_eval.views.sweep import board_lines


@dataclass(frozen=True)
class SweepPoint:
    checkpoint: str
    x: float  # its training iteration; by rank, right of the others, for one without
    iteration: int | None
    mean: float
    low: float  # its own anytime interval (cs95)
    high: float
    eliminated: bool
    training_metric: float | None
    rank: int


@dataclass(frozen=True)
class SweepReport:
    name: str
    result: dict[str, Any]  # the board
    points: list[SweepPoint]  # by x
    x_label: str
    best: str | None  # shown best; else the leader is marked as such
    leader: str | None
    pick: str | None  # training's pick
    pick_by: str | None
    training_metric_name: str | None
    caption: list[str]


def sweep_report(meta: dict[str, Any], *, name: str, status: str | None = None) -> SweepReport:
    """The sweep's report as its board stands after its last whole round; BadInput before its first round ended."""
    result = meta.get("sweep_result")
    if not result or not result.get("checkpoints"):
        raise BadInput(f"no round of sweep {name} has ended yet; try again later")
    result = {**result, "status": status or result.get("status") or meta.get("status")}
    points, x_label = placed(result["checkpoints"])
    pick = result.get("training_pick") or {}
    metric_names = {r.get("training_metric_name") for r in result["checkpoints"]} - {None}
    return SweepReport(
        name=name, result=result, points=points, x_label=x_label, best=result.get("best"),
        leader=result.get("leader"), pick=pick.get("checkpoint"), pick_by=pick.get("by"),
        training_metric_name=next(iter(metric_names)) if len(metric_names) == 1 else None,
        caption=sweep_caption(result, name))


def placed(rows: list[dict[str, Any]]) -> tuple[list[SweepPoint], str]:
    """The checkpoints with a mean, each at its training iteration; those without one to the right of the others,
    in rank order, one median step apart (all of them by rank when none has an iteration)."""
    known = sorted(r["iteration"] for r in rows if r.get("iteration") is not None)
    steps = [b - a for a, b in zip(known, known[1:]) if b > a]
    step = statistics.median(steps) if steps else 1.0
    last = known[-1] if known else 0.0
    unplaced = sorted((r for r in rows if r.get("iteration") is None), key=lambda r: r["rank"])
    x = {r["checkpoint"]: float(r["iteration"]) for r in rows if r.get("iteration") is not None}
    x.update({r["checkpoint"]: (last + step * (i + 1) if known else float(r["rank"])) for i, r in enumerate(unplaced)})
    label = "training iteration" if not unplaced else (
        "held-out rank (no training iteration known)" if not known
        else "training iteration (checkpoints without one on the right, by held-out rank)")
    points = [SweepPoint(checkpoint=r["checkpoint"], x=x[r["checkpoint"]], iteration=r.get("iteration"),
                         mean=float(r["mean"]), low=float((r.get("cs95") or [r["mean"]] * 2)[0]),
                         high=float((r.get("cs95") or [r["mean"]] * 2)[1]), eliminated=bool(r.get("eliminated_by")),
                         training_metric=r.get("training_metric"), rank=int(r["rank"]))
              for r in rows if r.get("mean") is not None]
    return sorted(points, key=lambda p: (p.x, p.checkpoint)), label


def sweep_caption(result: dict[str, Any], name: str) -> list[str]:
    """The board's lines, then what raced: runs, the path, seeds, episodes, status and version."""
    import tui_eval

    seeds = result.get("seeds") or [None, None]
    return [*board_lines(result),
            f"runs {', '.join(result.get('runs') or [str(result.get('run'))])} · path {result.get('path')}",
            f"seeds {seeds[0]}:{seeds[1]} · {result.get('rounds')} rounds · {result.get('episodes')} episodes of a "
            f"budget of {result.get('budget')} · sweep {name} · status {result.get('status')} · "
            f"tui-eval {tui_eval.__version__}"]
