"""What the doctor can run again of one replayed path (a `Side`, tui_eval/paths/rerun.py), as the path offers it
(`InferencePath.rerun`); everything runs on copies or under no_grad: the built path is left as it was."""

from __future__ import annotations

from typing import Any

import numpy as np

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


def reachable_modules(obj: Any, depth: int = 4) -> list[Any]:
    """torch nn.Modules reachable from `obj` (attributes, lists, dicts), outermost first."""
    import torch

    found: list[Any] = []
    seen: set[int] = set()

    def visit(o: Any, level: int) -> None:
        if o is None or id(o) in seen or level > depth or isinstance(o, (str, bytes, int, float, np.ndarray)):
            return
        seen.add(id(o))
        if isinstance(o, torch.nn.Module):
            found.append(o)
            return
        children: list[Any] = []
        if hasattr(o, "__dict__") and not isinstance(o, type):
            children.extend(vars(o).values())
        if isinstance(o, (list, tuple)):
            children.extend(o)
        if isinstance(o, dict):
            children.extend(o.values())
        for child in children:
            visit(child, level + 1)

    visit(obj, 0)
    return found
