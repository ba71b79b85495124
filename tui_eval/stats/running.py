"""Running (streaming) moments: O(1) work per observation.

References
----------
- B. P. Welford (1962), *Note on a method for calculating corrected sums of squares and products*,
  Technometrics 4(3):419-420.
- T. F. Chan, G. H. Golub, R. J. LeVeque (1983), *Algorithms for computing the sample variance:
  analysis and recommendations*, The American Statistician 37(3):242-247 (merging two accumulators).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["RunningMoments", "welford"]


class RunningMoments:
    """Welford's online mean and variance, plus min and max (Welford 1962).

    `add` is plain float arithmetic (no numpy) so that it costs well under a microsecond.
    `var` is the unbiased sample variance (ddof=1), as `numpy.var(x, ddof=1)`.
    """

    __slots__ = ("n", "mean", "m2", "min", "max")

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.min = math.inf
        self.max = -math.inf

    def add(self, x: float) -> None:
        n = self.n + 1
        self.n = n
        delta = x - self.mean
        self.mean += delta / n
        self.m2 += delta * (x - self.mean)
        if x < self.min:
            self.min = x
        if x > self.max:
            self.max = x

    def merge(self, other: RunningMoments) -> None:
        """Absorb another accumulator (Chan, Golub & LeVeque 1983, parallel update)."""
        if other.n == 0:
            return
        if self.n == 0:
            self.n, self.mean, self.m2, self.min, self.max = other.n, other.mean, other.m2, other.min, other.max
            return
        n = self.n + other.n
        delta = other.mean - self.mean
        self.mean += delta * other.n / n
        self.m2 += other.m2 + delta * delta * self.n * other.n / n
        self.n = n
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

    @property
    def var(self) -> float:
        """Unbiased sample variance (ddof=1); NaN when n < 2."""
        return self.m2 / (self.n - 1) if self.n > 1 else math.nan

    @property
    def std(self) -> float:
        """Sample standard deviation (ddof=1); NaN when n < 2."""
        return math.sqrt(max(self.var, 0.0)) if self.n > 1 else math.nan


def welford(x) -> RunningMoments:
    """Feed an array through `RunningMoments` (one observation at a time) and return the accumulator.

    A reference for tests: the streaming result must equal `numpy.mean` / `numpy.std(ddof=1)`.
    """
    acc = RunningMoments()
    for v in np.asarray(x, dtype=float).ravel().tolist():
        acc.add(v)
    return acc
