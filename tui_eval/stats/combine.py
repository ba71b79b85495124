"""Confidence sequences combined by splitting alpha: the intersection of valid parts is valid.

If C1 is a (1 - a1) and C2 a (1 - a2) confidence sequence for the same mean, then
P(exists t: mu not in C1_t or mu not in C2_t) <= a1 + a2 (union bound), so ``C1_t ∩ C2_t`` is a
(1 - a1 - a2) confidence sequence, as narrow as the narrower part at every look (the union bound, as
for the running intersection of one CS: Howard et al. 2021, Sec. 2).

For bounded returns tui-eval shows the hedged betting CS (Waudby-Smith & Ramdas 2023, valid from
the first episode, non-asymptotically) intersected with the variance-guarded asymptotic CS
(Waudby-Smith et al. 2021; its guard with `guards.KISH_PSEUDO_BOUNDED` Kish pseudo-observations),
with `ASYMPTOTIC_SHARE` of alpha for the asymptotic part. Why: any
bounded, non-asymptotic sequence pays a term of order range x log(1/alpha)/n, so where the spread is
tiny next to the bounds (Pendulum: a return's sd of 220 in a range of 3,255) it stays wide for
thousands of episodes, while the asymptotic part reaches about 1.8x the fixed-n t-interval; where
the data are degenerate (all returns at the cap) the asymptotic part shows nothing and the betting
part is the interval. The share was chosen by the power and coverage simulations of
`bench/bench_stats.py` (README, statistics): 90% keeps the pairs-until-`differ` on the Pendulum-like
shape within 2.5x the fixed-n t-test (50%: 2.7x), and costs the capped shape nothing (the betting
part at 10% of alpha still decides it).

References: S. R. Howard, A. Ramdas, J. McAuliffe, J. Sekhon (2021), Ann. Statist. 49(2);
I. Waudby-Smith, A. Ramdas (2023), JRSS-B 86(1); I. Waudby-Smith et al. (2021), arXiv:2103.06476.
"""

from __future__ import annotations

import numpy as np

from .betting import hedged_betting_cs
from .guards import KISH_PSEUDO_BOUNDED, guarded_asymptotic_cs

__all__ = ["ASYMPTOTIC_SHARE", "ASYMPTOTIC_JOINS_AT", "intersect", "intersect_arrays", "betting_and_asymptotic_cs"]

ASYMPTOTIC_SHARE = 0.9  # of alpha, for the asymptotic part; the betting part gets the rest
# The asymptotic part joins from this many values on (unbounded returns: from the burn-in, 30): the
# betting part covers the first looks, where the CLT is still poor for skewed returns. Measured
# ever-miss of the asymptotic part at 0.9 alpha on lognormal(0, 1) clipped to [0, 20] with the range
# prior alone as its guard, 3,000 x 1,000: from 30 on 8.0%, from 60 on 5.3%, from 100 on 3.4%; with
# the guard of `guards` (6 Kish pseudo-observations within bounds), 5,000 x 1,000, from 60 on 4.7%.
# 60 still decides the Pendulum-like difference of 100 (fixed-n n = 16) within 2.5 x 30 pairs.
ASYMPTOTIC_JOINS_AT = 60


def intersect(first, second):
    """The intersection of two intervals (either may be None: the other is returned). When they
    do not overlap (possible only in the probability-<= alpha event that a part misses) the first
    is returned: callers put the non-asymptotic part first."""
    if first is None or second is None:
        return first if second is None else second
    lo, hi = max(first[0], second[0]), min(first[1], second[1])
    if lo > hi:
        return first
    return (lo, hi)


def intersect_arrays(lo1, hi1, lo2, hi2):
    """`intersect` look by look on arrays; NaN bounds in the second part mean "not shown"."""
    lo = np.fmax(lo1, lo2)
    hi = np.fmin(hi1, hi2)
    empty = lo > hi
    return np.where(empty, lo1, lo), np.where(empty, hi1, hi)


def betting_and_asymptotic_cs(x, lo: float, hi: float, alpha: float = 0.05, burn_in: int = 30,
                              share: float = ASYMPTOTIC_SHARE):
    """What `PathStats` shows for returns in [lo, hi], at every look of `x` (runs x looks): the
    hedged betting CS at (1 - share) alpha intersected with the guarded asymptotic CS at share x
    alpha (from max(`burn_in`, `ASYMPTOTIC_JOINS_AT`) looks on). Vectorised, for coverage and power
    simulations."""
    blo, bhi = hedged_betting_cs(x, lo, hi, (1.0 - share) * alpha)
    joins = max(burn_in, ASYMPTOTIC_JOINS_AT)
    alo, ahi = guarded_asymptotic_cs(x, share * alpha, burn_in=joins, kish=KISH_PSEUDO_BOUNDED)
    return intersect_arrays(blo, bhi, alo, ahi)
