"""The same policy, episodes apart: the divergence explained as amplified rounding, with its numbers.

Two paths whose policies send the same actions on the same observations (within the tolerance, both ways:
tui_eval/paths/agreement.py) still part when the dynamics amplify a rounding: onnxruntime against torch, float64
against float32, a GPU kernel against a CPU one. The doctor then says so instead of "unexplained": the step where the
paths first part, |Δaction| there, and how |Δobservation| grows after it (its size at the first divergent step and
some steps later, and the steps it took to grow a thousandfold), and that nothing in the export needs fixing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tui_eval.doctor.findings import Finding
from tui_eval.doctor.replay import Divergence
from tui_eval.paths.agreement import agreement_of, how_they_part
from tui_eval.paths.rerun import Side, Trace

TOPIC = "rounding"


def growth(a: Trace, b: Trace, start: int) -> list[tuple[int, float]]:
    """(step, largest |Δobservation|) from `start` on, while both episodes last."""
    oa, ob = a.stages.get("obs", []), b.stages.get("obs", [])
    out = []
    for t in range(start, min(len(oa), len(ob))):
        x, y = np.asarray(oa[t], dtype=float).reshape(-1), np.asarray(ob[t], dtype=float).reshape(-1)
        if x.shape == y.shape and x.size:
            out.append((t, float(np.max(np.abs(x - y)))))
    return out


def growth_text(points: list[tuple[int, float]]) -> str:
    """|Δobservation| at the first step after the divergence, ten and a hundred steps later and at the end, and the
    steps it took to grow a thousandfold."""
    if not points:
        return "the observations after it were not recorded"
    first_step, first = next(((t, d) for t, d in points if d > 0), points[0])  # the first rounding that shows
    shown = [(t, d) for t, d in points if t in (first_step, first_step + 10, first_step + 100)] + [points[-1]]
    parts = [f"{d:.2g} at step {t}" for t, d in dict(shown).items()]
    thousand = next((t for t, d in points if first > 0 and d >= 1000 * first), None)
    grew = f"; a thousandfold by step {thousand} ({thousand - first_step} steps)" if thousand is not None else ""
    return "|Δobservation| " + ", ".join(parts) + grew


def rounding_finding(a: str, b: str, traces: dict[str, Trace], sides: dict[str, Side], paths: dict[str, Any],
                     div: Divergence, seed: int) -> Finding | None:
    """The finding when `a` and `b` are the same policy on `seed`'s observations; None when they are not (or their
    policies cannot be fed the other's observations)."""
    if how_they_part(traces[a], traces[b])[0] == "env":  # the same actions, other observations: not rounding
        return None
    fed = {n: s for n, s in sides.items() if s.stepper is not None}
    found, _ = agreement_of(seed, a, b, traces, fed, paths)
    if found is None or not found.within:
        return None
    t = div.step
    points = growth(traces[a], traces[b], 0)
    apart = next((step for step, d in points if d > 0), None)
    since = "" if apart is None else f"the observations first differ at step {apart} ({dict(points)[apart]:.2g}); "
    if t is not None:
        acts = [np.asarray(traces[n].env_actions[t], dtype=float).reshape(-1) for n in (a, b)]
        at_step = float(np.max(np.abs(acts[0] - acts[1]))) if acts[0].shape == acts[1].shape else float("nan")
        parted = f"the actions sent part beyond the tolerance at step {t} (|Δaction| {at_step:.2g} there)"
    else:  # within the tolerance throughout, and still another return
        t = apart
        parted = (f"the actions sent stay within the tolerance to the end, yet the returns part ({a} "
                  f"{traces[a].ret:.9g}, {b} {traces[b].ret:.9g})")
    evidence = (f"fed each other's observations of seed {seed}, the policies send the same actions (max |Δaction| "
                f"{found.max_abs:.2g}, p99 {found.p99_abs:.2g} over {found.steps} steps both ways, tolerance "
                f"{found.tolerance.atol:g}); {since}{parted}; "
                f"{growth_text([p for p in points if apart is None or p[0] >= apart])}")
    return Finding(f"the same policy: `{a}` and `{b}` part because the dynamics amplify rounding (float arithmetic "
                   "of another library, type or device), not because they act otherwise", evidence,
                   "nothing to fix in the export: judge the returns statistically (the run's SAME POLICY verdict); "
                   "--equivalence-margin floor compares them with a path's own noise", [a, b], "action", seed, t,
                   60, TOPIC)
