"""What ended a path's episodes and what their reward was made of, where the env names both (a manager-based env:
mjlab, Isaac Lab): termination terms counted, each reward term's episode sum averaged.

`TermTally` is fed every record of one path (O(number of terms) per record). `term_differences` puts two paths'
reward terms side by side: which term moved, by how much, with a Welch interval of the difference of the two
means (fixed-n: for reading a finished or paused run, not for stopping on it).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from scipy import stats as sps

from tui_eval.spec import EpisodeRecord


class TermTally:
    """One path's termination counts and reward-term sums."""

    def __init__(self) -> None:
        self.terminations: Counter[str] = Counter()
        self._sums: dict[str, list[float]] = {}  # term -> [n, mean, M2] (Welford)

    def add(self, record: EpisodeRecord) -> None:
        if record.termination is not None:
            self.terminations[record.termination] += 1
        if record.invalid:
            return  # a blown-up world's terms are not the policy's
        for term, value in record.reward_terms:
            if not math.isfinite(value):
                continue
            acc = self._sums.setdefault(term, [0.0, 0.0, 0.0])
            acc[0] += 1
            delta = value - acc[1]
            acc[1] += delta / acc[0]
            acc[2] += delta * (value - acc[1])

    def summary(self) -> dict[str, Any]:
        """`terminations` ({term: episodes}) and `reward_terms` ({term: {mean, std, n}}), each only when known."""
        out: dict[str, Any] = {}
        if self.terminations:
            out["terminations"] = dict(self.terminations.most_common())
        if self._sums:
            out["reward_terms"] = {
                term: {"mean": mean, "std": math.sqrt(m2 / (n - 1)) if n > 1 else None, "n": int(n)}
                for term, (n, mean, m2) in self._sums.items()}
        return out


@dataclass(frozen=True)
class TermDifference:
    term: str
    mean_a: float | None
    mean_b: float | None
    diff: float | None  # b - a
    ci: tuple[float, float] | None  # of the difference, Welch, level 1 - alpha

    @property
    def strength(self) -> float:
        """How far the interval is from 0, relative to its width (for ordering: the term that moved most first)."""
        if self.diff is None or self.ci is None:
            return -1.0
        half = (self.ci[1] - self.ci[0]) / 2
        return abs(self.diff) / half if half > 0 else (math.inf if self.diff else 0.0)


def term_differences(a: dict[str, Any] | None, b: dict[str, Any] | None, alpha: float = 0.05) -> list[TermDifference]:
    """Each reward term of two paths' summaries (`TermTally.summary()` inside them), b - a, most moved first."""
    terms_a = (a or {}).get("reward_terms") or {}
    terms_b = (b or {}).get("reward_terms") or {}
    rows = []
    for term in list(terms_a) + [t for t in terms_b if t not in terms_a]:
        ta, tb = terms_a.get(term), terms_b.get(term)
        mean_a = ta["mean"] if ta else None
        mean_b = tb["mean"] if tb else None
        diff = mean_b - mean_a if mean_a is not None and mean_b is not None else None
        rows.append(TermDifference(term, mean_a, mean_b, diff, _welch(ta, tb, alpha) if diff is not None else None))
    return sorted(rows, key=lambda r: -r.strength)


def _welch(ta: dict[str, Any] | None, tb: dict[str, Any] | None, alpha: float) -> tuple[float, float] | None:
    if not ta or not tb or ta["n"] < 2 or tb["n"] < 2 or ta["std"] is None or tb["std"] is None:
        return None
    va, vb = ta["std"] ** 2 / ta["n"], tb["std"] ** 2 / tb["n"]
    diff = tb["mean"] - ta["mean"]
    se = math.sqrt(va + vb)
    if se == 0.0:
        return (diff, diff)
    dof = (va + vb) ** 2 / (va ** 2 / (ta["n"] - 1) + vb ** 2 / (tb["n"] - 1))
    half = float(sps.t.ppf(1 - alpha / 2, dof)) * se
    return (diff - half, diff + half)
