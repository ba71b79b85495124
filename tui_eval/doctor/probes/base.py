"""One counterfactual probe: a known deployment mistake, tested at the step where two paths part.

A probe names the mistake, says when it applies, and tests it: it transforms one path's input or
output (or its policy: a fresh state, eval mode) and runs that path's step again. When the paths
then agree, the probe returns its proof, and the mistake becomes a finding. `Case` gives probes the
two sides, the divergent step and helpers to rerun a side on the other side's observations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tui_eval.paths.rerun import Side, run_policy

#: agreement after a probe's transform ("equals ... to 1e-5"), as the replay's tolerance
ATOL = 1e-5
#: steps from the divergent one on which a probe checks its transform (where the reference has them);
#: discrete actions agree by chance far more often than real numbers do, so they are checked on more steps
WINDOW = 20
DISCRETE_WINDOW = 200


@dataclass
class Case:
    """`sus` is the path a probe transforms, `ref` the path it should then agree with."""

    ref: Side
    sus: Side
    t: int

    @property
    def span(self) -> range:
        n = min(len(self.ref.steps("obs")), len(self.ref.steps("action_for_env")))
        return range(self.t, min(n, self.t + (WINDOW if continuous(self) else DISCRETE_WINDOW)))

    def ref_obs(self, stage: str = "obs") -> list[Any]:
        values = self.ref.inputs() if stage == "obs" else self.ref.steps(stage)
        return [values[s] for s in self.span]

    def ref_actions(self) -> list[Any]:
        return [self.ref.steps("action_for_env")[s] for s in self.span]

    def rerun(self, inputs: Sequence[Any], history: Sequence[Any] | None = None,
              mutate: Callable[[Any], None] | None = None, fresh: bool = False,
              side: Side | None = None, reset_each_step: bool = False) -> list[np.ndarray] | None:
        """`side` (default `sus`) run again on `inputs` at steps `span`, after `history` (default: its own
        observations before step t; nothing for a stateless side)."""
        side = side or self.sus
        make = side.fresh if fresh else side.stepper
        if make is None:
            return None
        if history is None:
            history = [] if side.stateless else side.inputs()[: self.t]
        return run_policy(make, history, inputs, mutate=mutate, reset_each_step=reset_each_step)


def max_diff(xs: Sequence[Any], ys: Sequence[Any]) -> float | None:
    """Max abs difference of two equally long action lists (None when shapes differ or lists are empty)."""
    if not xs or len(xs) != len(ys):
        return None
    worst = 0.0
    for x, y in zip(xs, ys):
        a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if a.shape != b.shape:
            return None
        worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
    return worst


def agree(xs: Sequence[Any] | None, ys: Sequence[Any]) -> float | None:
    """The max abs difference when `xs` equals `ys` to ATOL, else None."""
    if xs is None:
        return None
    d = max_diff(xs, ys)
    return d if d is not None and d <= ATOL else None


def steps_text(case: Case, n: int | None = None) -> str:
    span = case.span
    last = span.start + (n if n is not None else len(span)) - 1
    return f"step {span.start}" if last <= span.start else f"steps {span.start}-{last}"


def continuous(case: Case) -> bool:
    a = case.ref.stage("action_for_env", case.t)
    return a is not None and np.asarray(a).dtype.kind == "f"


@dataclass(frozen=True)
class Counterfactual:
    """A deployment mistake, and how to test it. `cause` and `fix` name the paths as {sus} and {ref}."""

    name: str
    topic: str  # a rule's finding on the same topic gains this proof instead of a second finding
    cause: str
    fix: str
    stage: str  # where the mistake acts
    applies: Callable[[Case], bool]
    test: Callable[[Case], str | None]  # the proof, when the transformed path agrees with the other
