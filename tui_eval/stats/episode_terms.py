"""What ended a path's episodes and what their reward was made of, where the env names both (a manager-based env:
mjlab, Isaac Lab): termination terms counted, each reward term's episode sum averaged.

`TermTally` is fed every record of one path (O(number of terms) per record). `term_differences` puts two paths'
reward terms side by side, paired by seed as the returns are: which term moved, by how much, with a t interval of
the per-seed differences (fixed-n: for reading a finished or paused run, not for stopping on it).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from tui_eval.records import EpisodeRecord

from .intervals import t_interval


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
    mean_a: float | None  # over the paired seeds
    mean_b: float | None
    diff: float | None  # b - a, paired by seed
    ci: tuple[float, float] | None  # of the paired difference, Student's t, level 1 - alpha

    @property
    def strength(self) -> float:
        """How far the interval is from 0, relative to its width (for ordering: the term that moved most first)."""
        if self.diff is None or self.ci is None:
            return -1.0
        half = (self.ci[1] - self.ci[0]) / 2
        return abs(self.diff) / half if half > 0 else (math.inf if self.diff else 0.0)

    def to_json(self) -> dict[str, Any]:
        return {"term": self.term, "mean_a": self.mean_a, "mean_b": self.mean_b, "diff": self.diff,
                "ci95": list(self.ci) if self.ci is not None else None}


def term_differences(records: list[EpisodeRecord], a: str, b: str,
                     alpha: float = 0.05) -> tuple[int, list[TermDifference]]:
    """(pairs, each reward term's b - a): paired by seed over the valid episodes both paths ran, with a fixed-n
    t interval of the per-seed differences; the term that moved most first."""
    by_a = {(r.seed, r.block): dict(r.reward_terms) for r in records if r.path == a and r.reward_terms
            and not r.invalid}
    by_b = {(r.seed, r.block): dict(r.reward_terms) for r in records if r.path == b and r.reward_terms
            and not r.invalid}
    keys = sorted(by_a.keys() & by_b.keys())
    terms = list(dict.fromkeys(t for key in keys for t in [*by_a[key], *by_b[key]]))  # first seen first
    rows = []
    for term in terms:
        pairs = np.array([(by_a[k][term], by_b[k][term]) for k in keys if term in by_a[k] and term in by_b[k]],
                         dtype=float).reshape(-1, 2)
        pairs = pairs[np.isfinite(pairs).all(axis=1)]
        if not len(pairs):
            rows.append(TermDifference(term, None, None, None, None))
            continue
        d = pairs[:, 1] - pairs[:, 0]
        rows.append(TermDifference(term, float(pairs[:, 0].mean()), float(pairs[:, 1].mean()), float(d.mean()),
                                   t_interval(d, alpha)))
    return len(keys), sorted(rows, key=lambda r: -r.strength)
