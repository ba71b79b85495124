"""Trajectory replay: one seed, every path, every step recorded, and where two paths first part.

The env and the seed are the same for every path, so the first step where the actions sent to the env differ
is the first divergence. Each path replays itself (`InferencePath.replay`, tui_eval/paths/rerun.py): RLlib's
built-in paths record every stage from their live module and pipelines, rsl_rl's the live world's actor input,
normalized input and MLP output where the policy exposes them, a `--path` loop what it was given and sent. A
path that offers no replay is compared by its episodes only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tui_eval.doctor.static_diff import Probe
from tui_eval.paths.rerun import STAGES, Trace, close


def replay(p: Probe, seed: int) -> Trace:
    """Path `p` on `seed`, as the path replays itself."""
    trace = p.path.replay(seed) if p.path is not None else None
    return trace if trace is not None else Trace(p.name, note="no replay for this path (only its episodes are "
                                                               "compared)")


@dataclass
class Divergence:
    step: int | None  # first step whose env actions differ (or where one episode ends first)
    stage: str | None  # first stage that differs at that step (built-in paths on both sides)
    values: dict[str, Any]  # path -> value at that stage and step
    differs_in: str  # "action" | "length" | "none" (nothing differs) | "unknown" (no step-by-step replay)
    stage_match: dict[str, str] | None = None  # {"path": A, "stage": S, "of": B}: A sends B's stage S to the env


def first_divergence(a: Trace, b: Trace) -> Divergence:
    """Where two traces of the same seed first part."""
    if not a.stages or not b.stages:  # a path without a step-by-step replay: only returns are compared
        return Divergence(None, None, {}, "unknown")
    ea, eb = a.env_actions, b.env_actions
    n = min(len(ea), len(eb))
    for t in range(n):
        if not close(ea[t], eb[t]):
            stage = None
            values = {a.path: _plain(ea[t]), b.path: _plain(eb[t])}
            for s in STAGES:
                sa, sb = a.stages.get(s, []), b.stages.get(s, [])
                if t < len(sa) and t < len(sb) and not close(sa[t], sb[t]):
                    stage, values = s, {a.path: _plain(sa[t]), b.path: _plain(sb[t])}
                    break
            match = _stage_match(a, b, t) or _stage_match(b, a, t)
            return Divergence(t, stage or "action_for_env", values, "action", match)
    if len(ea) != len(eb) or a.length != b.length:
        return Divergence(n, "env", {a.path: f"{a.length} steps ({a.end})", b.path: f"{b.length} steps ({b.end})"},
                          "length")
    return Divergence(None, None, {}, "none")


def _stage_match(a: Trace, b: Trace, t: int) -> dict[str, str] | None:
    """When a's env action at step t equals one of b's earlier stages (same observation up to t)."""
    ea = a.env_actions
    for s in ("action", "module_out", "env_to_module"):
        sb = b.stages.get(s, [])
        if t < len(sb) and close(ea[t], sb[t], atol=1e-4, rtol=1e-4):
            return {"path": a.path, "stage": s, "of": b.path}
    return None


def _plain(v: Any) -> Any:
    arr = np.asarray(v)
    if arr.dtype.kind in "fc":
        return np.round(arr.astype(float), 6).tolist()
    return arr.tolist()
