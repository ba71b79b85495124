"""The variance guard of the asymptotic CS without return bounds, on the side of the unseen tail.

Every miss of the asymptotic CS on skewed returns (lognormal, exponential, Bernoulli(0.1), capped) is on
one side: a sample that lacks the long tail has a mean and a variance that are both too low, so the
interval ends short of the true mean on the side of the tail. The sign of the third central moment
(``sum d^3``) says which side that is. This guard widens that side only:

* `tail_range_weight`: the range prior of Waudby-Smith & Ramdas (2023), eq. (13) (pseudo-observations
  of ``(range seen / 2)^2``), at ``TAIL_RANGE_PSEUDO (RANGE_FULL_UNTIL / n)^TAIL_RANGE_FADE``: heavy on
  the first looks, where half the misses fall, and fading fast after (the range keeps growing with
  heavy tails);
* `cornish_fisher_widening`: the first-order Edgeworth (Cornish-Fisher) correction of the studentized
  mean, ``P(T <= x) = Phi(x) + n^-1/2 gamma (2 x^2 + 1) / 6 phi(x) + O(1/n)`` (Hall 1992, Sec. 2.6;
  Johnson 1978), applied to the boundary ``c`` of the sequence at that look: the tail side's
  half-width grows by ``|gamma| (2 c^2 + 1) / (6 n)`` standard deviations. For k rare returns among
  n (capped or Bernoulli returns) ``|gamma| / sqrt(n)`` is ``1 / sqrt(k)``: it stays while the rare
  returns stay few (the job the Kish pseudo-observations of `guards` do on both sides);
* the other side keeps the plain sample variance: its misses are the short tail's, which the CLT
  covers (Gaussian and t3 samples, where the sign of ``sum d^3`` is noise, included: README). Where
  ``sum d^3`` is exactly 0 both sides are guarded.

The two together are what the coverage and power simulations chose (README, statistics;
tests/unit/test_stats_tail_guard.py; bench/bench_stats.py --power).

References: I. Waudby-Smith, A. Ramdas (2023), JRSS-B, arXiv:2010.09686; I. Waudby-Smith et al.
(2021), arXiv:2103.06476, Theorem 2.2; P. Hall (1992), *The Bootstrap and Edgeworth Expansion*,
Springer, Sec. 2.6 (Edgeworth expansion of the studentized mean); N. J. Johnson (1978), Modified t
tests and confidence intervals for asymmetrical populations, JASA 73(363):536-544.
"""

from __future__ import annotations

import numpy as np

from .guards import RANGE_FULL_UNTIL, running_central_moments
from .sequences import gaussian_mixture_half_width

__all__ = ["TAIL_RANGE_PSEUDO", "TAIL_RANGE_FADE", "tail_range_weight", "sample_skewness", "cornish_fisher_widening",
           "tail_guarded_cs_from_moments", "tail_guarded_cs"]

# Chosen by the simulations (README, statistics), 1,000 runs x 1,000 looks, ever-miss of lognormal(0, 1)
# without bounds: the symmetric guard of `guards` 7.8%; Cornish-Fisher on both guards' output (symmetric
# Kish 3) 4.1%, but 3.4x the fixed-n t-interval on capped CartPole at n = 100 (goal <= 2.5); the
# tail-side-only guard with the range prior at 8 (as `guards`) 6.1%, at 16 fading as n^-1.5 after 60
# 4.3% (capped CartPole 2.55x), at 16 (60 / n)^2 4.2% (2.46x).
TAIL_RANGE_PSEUDO = 16
TAIL_RANGE_FADE = 2.0


def tail_range_weight(n):
    """Pseudo-observations of the range prior on the tail side after n values:
    ``TAIL_RANGE_PSEUDO (RANGE_FULL_UNTIL / n)^TAIL_RANGE_FADE`` (64 at 30 values, 16 at 60, 5.8 at 100)."""
    n = np.asarray(n, dtype=float)
    return TAIL_RANGE_PSEUDO * (RANGE_FULL_UNTIL / n) ** TAIL_RANGE_FADE


def sample_skewness(n, m2, m3):
    """``(m3 / n) / (m2 / n)^1.5`` from the sums of squared and cubed deviations; 0 where that scale is 0
    (m2 is 0, or so small that its 1.5th power underflows: values of order 1e-150)."""
    n, m2, m3 = np.asarray(n, dtype=float), np.asarray(m2, dtype=float), np.asarray(m3, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
        scale = np.sqrt(m2 / n) ** 3
        return np.where(scale > 0.0, (m3 / n) / np.where(scale > 0.0, scale, 1.0), 0.0)


def cornish_fisher_widening(n, skew, unit_half):
    """Extra half-width, in standard deviations, on the tail side: ``|skew| (2 c^2 + 1) / (6 n)`` with
    ``c = unit_half sqrt(n)`` the boundary in units of the studentized mean (Hall 1992, Sec. 2.6)."""
    n = np.asarray(n, dtype=float)
    c2 = unit_half * unit_half * n
    return np.abs(skew) * (2.0 * c2 + 1.0) / (6.0 * n)


def _tail_and_other_sd(n, m2, span):
    """(sd on the tail side: the sample variance with the range prior, never below it; plain sd)."""
    k = tail_range_weight(n)
    plain = m2 / (n - 1.0)
    tail = np.maximum(plain, (k * 0.25 * span * span + m2) / (n + k))
    return np.sqrt(tail), np.sqrt(plain)


def _halves(n, m2, m3, span, alpha, target_n):
    """(upper half-width, lower half-width): the tail side (sign of m3) guarded, the other plain; both
    guarded where m3 is 0 (no side is indicated; and mirrored data, -x, get the mirrored interval)."""
    unit = gaussian_mixture_half_width(n, 1.0, alpha, target_n=target_n)
    sd_tail, sd_plain = _tail_and_other_sd(n, m2, span)
    skew = sample_skewness(n, m2, m3)
    tail = sd_tail * (unit + cornish_fisher_widening(n, skew, unit))
    other = sd_plain * unit
    m3 = np.asarray(m3)
    return np.where(m3 < 0.0, other, tail), np.where(m3 > 0.0, other, tail)


def tail_guarded_cs_from_moments(
    n: int, mean: float, m2: float, m3: float, lo: float, hi: float, alpha: float = 0.05,
    target_n: float = 100, burn_in: int = 30,
) -> tuple[float, float] | None:
    """The Waudby-Smith et al. (2021) asymptotic CS with the tail-side guard, from n values' mean, sums
    of squared and cubed deviations `m2`, `m3` and min/max `lo`/`hi`. None before `burn_in` values or
    while all values are identical (no zero-width interval)."""
    if n < max(2, burn_in) or not hi > lo:
        return None
    up, down = _halves(float(n), m2, m3, hi - lo, alpha, target_n)
    return (mean - float(down), mean + float(up))


def tail_guarded_cs(x, alpha: float = 0.05, target_n: float = 100, burn_in: int = 30):
    """`tail_guarded_cs_from_moments` at every look of `x` (last axis), vectorised for coverage
    simulations; ``(lo, hi)`` arrays, NaN where no interval is shown."""
    x = np.asarray(x, dtype=float)
    t, mean, m2, m3, _m4 = running_central_moments(x)
    span = np.maximum.accumulate(x, axis=-1) - np.minimum.accumulate(x, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        up, down = _halves(t, m2, m3, span, alpha, target_n)
    hide = (t < max(2, burn_in)) | ~(span > 0.0)
    return mean - np.where(hide, np.nan, down), mean + np.where(hide, np.nan, up)
