"""Counterfactual probes on a diverged pair, turned into findings (or into the proof of a rule's finding)."""

from __future__ import annotations

import time
from typing import Any

from tui_eval.doctor.findings import Finding
from tui_eval.doctor.probes import run_probes
from tui_eval.doctor.replay import Divergence
from tui_eval.doctor.sides import build_side
from tui_eval.doctor.static_diff import Probe
from tui_eval.paths.rerun import Side, Trace

#: a finding with a proof ranks above any finding read from settings alone
PROVEN = 200


class Sides:
    """Sides built on first use (only paths in a diverged pair are ever rerun)."""

    def __init__(self, probes: dict[str, Probe], traces: dict[str, Trace]):
        self.probes, self.traces = probes, traces
        self.built: dict[str, Side] = {}
        self.seconds = 0.0  # spent building sides and running probes
    def __getitem__(self, name: str) -> Side:
        if name not in self.built:
            self.built[name] = build_side(self.probes[name], self.traces[name])
        return self.built[name]


def prove(found: list[Finding], sides: Sides, a: str, b: str, div: Divergence, seed: int | None,
          notes: list[str], kind: Any) -> list[Finding]:
    """`found` (a pair's findings from settings) with the first probe's proof: joined to the finding on its
    topic, or as a finding of its own, whose fix is `kind`'s own where it has one (its library's way); the
    'unexplained' fallback goes when a probe explains the divergence."""
    if div.differs_in != "action" or div.step is None:
        return found
    started = time.perf_counter()
    side_a, side_b = sides[a], sides[b]
    notes += [n for s in (side_a, side_b) for n in s.notes]
    proven, probe_notes = run_probes(side_a, side_b, div.step)
    sides.seconds += time.perf_counter() - started
    notes += probe_notes
    if proven is None:
        return found
    proven.own_fix = kind.probe_fix(proven.probe.name)
    proof = f"proof: {proven.proof}"
    for f in found:
        if f.topic == proven.probe.topic:
            f.evidence, f.score = f"{f.evidence}; {proof}", max(f.score, PROVEN)
            break
    else:
        where = f"first divergence at seed {seed}, step {div.step}, stage {div.stage}"
        found.append(Finding(proven.cause, f"{proof}; {where}", proven.fix, [a, b], proven.probe.stage, seed,
                             div.step, PROVEN, proven.probe.topic))
    kept = [f for f in found if f.topic != "unexplained"]
    kept.sort(key=lambda f: -f.score)
    return kept


def sides_json(sides: Sides) -> dict[str, Any]:
    """What the probes could rerun of each path, and the seconds they took."""
    return {"seconds": round(sides.seconds, 3),
            "paths": {n: [k for k in ("stepper", "fresh", "head", "logits") if getattr(s, k) is not None]
                      for n, s in sides.built.items()}}
