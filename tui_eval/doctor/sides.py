"""What the doctor can run again of one replayed path (a `Side`, tui_eval/paths/rerun.py), as the path offers it
(`InferencePath.rerun`); everything runs on copies or under no_grad: the built path is left as it was."""

from __future__ import annotations

from tui_eval.doctor.static_diff import Probe
from tui_eval.paths.rerun import Side, Trace


def build_side(pr: Probe, trace: Trace) -> Side:
    """The re-runnable parts of a replayed path (those it offers)."""
    try:
        side = pr.path.rerun(trace) if pr.path is not None else None
    except Exception as exc:  # a part the doctor cannot rerun is left out, never fatal
        side = Side(pr.name, trace, explore=pr.explore)
        side.notes.append(f"cannot rerun {pr.name}'s policy: {type(exc).__name__}: {exc}")
    if side is None:
        return Side(pr.name, trace, explore=pr.explore)
    side.name, side.explore = pr.name, pr.explore
    return side
