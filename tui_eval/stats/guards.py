"""Guards that keep the live statistics from reassuring falsely when the data are degenerate.

- `guarded_variance`, a symmetric guard: it guards the asymptotic part of the bounded CS (`combine`,
  with `KISH_PSEUDO_BOUNDED`) and the unpaired fallback of `Comparison`; without bounds a path's
  asymptotic CS is guarded on the side of the long tail only (`tail_guard`). The asymptotic CS plugs
  in a sample variance, which is too small exactly when
  the returns that carry the variance are missing or few: a run of identical returns (a policy capped
  at the max on most seeds) makes it 0, a sample of skewed returns without its long tail makes both
  the mean and the variance low (every miss of the plain asymptotic CS on exponential, lognormal,
  Bernoulli(0.1) or capped returns is on that side). Two sets of pseudo-observations guard it:
  * `KISH_PSEUDO` at the variance-weighted mean squared deviation ``M4 / M2`` (``sum d^4 / sum d^2``):
    the variance estimate is an average of squared deviations whose effective number is Kish's
    ``n_eff = M2^2 / M4`` (Kish 1965), about the count of rare returns when a few carry the variance
    (Bernoulli, capped) and a share of n for continuous returns (n/3 for a Gaussian). The guard adds
    ``KISH_PSEUDO`` such returns, i.e. multiplies the variance by about ``1 + KISH_PSEUDO / n_eff``:
    it stays as long as the rare returns stay few, and costs continuous returns almost nothing (the
    heavy tails of t3 or a lognormal difference included: ``M4 / M2`` grows far slower than the range).
  * `RANGE_PSEUDO` of ``(range seen / 2)^2``, the prior of the predictable plug-in of Waudby-Smith &
    Ramdas (2023), eq. (13), ``(1/4 + sum (y - mu)^2) / (t + 1)`` on data scaled to the range (there
    with weight 1), with the range seen so far in place of a known one, at full weight up to
    `RANGE_FULL_UNTIL` values and shrinking as ``n^-RANGE_FADE_POWER`` after: it covers the first looks, where a skewed
    sample most often lacks its tail (exponential returns: half the misses of the unguarded CS come
    before 60), and leaves later looks to the data, whose range keeps growing with heavy tails.
  And no interval at all until two distinct values were seen (no scale exists before).
- `returns_identical`: "identical" for returns summed from float32 rewards.
- `anytime_share_upper`: how large the share of differing seeds can still be when none or few
  differed (Robbins' beta mixture, anytime-valid).

References: I. Waudby-Smith, A. Ramdas (2023), JRSS-B, arXiv:2010.09686; I. Waudby-Smith et al.
(2021), arXiv:2103.06476, Theorem 2.2; L. Kish (1965), *Survey Sampling*, Wiley (effective sample
size); H. Robbins (1970),
Ann. Math. Statist. 41(5).
"""

from __future__ import annotations

import math

import numpy as np

from .sequences import beta_mixture_cs_scalar, gaussian_mixture_half_width

__all__ = [
    "EPS32",
    "KISH_PSEUDO",
    "KISH_PSEUDO_BOUNDED",
    "RANGE_PSEUDO",
    "RANGE_FULL_UNTIL",
    "RANGE_FADE_POWER",
    "range_weight",
    "returns_identical",
    "guarded_variance",
    "guarded_asymptotic_cs_from_moments",
    "guarded_asymptotic_cs",
    "running_central_moments",
    "anytime_share_upper",
]

EPS32 = 2.0**-23  # float32 machine epsilon (spacing of float32 numbers in [1, 2))

# Weights, chosen by the coverage and power simulations (README, statistics; bench/bench_stats.py).
# Ever-miss at alpha 0.05, 2 x 1,000 runs x 1,000 looks, range prior alone at weight 8 (before) -> these:
# Bernoulli(0.1) 5.0% -> 3.5%, capped CartPole 3.4% -> 1.8%, exponential(1) 3.6% -> 3.7%, lognormal(0, 1)
# 8.4% -> 8.6%. Kish weight 2 / 3 / 4 alone (no range prior): Bernoulli(0.1) 5.1% / 3.7% / 3.1%,
# exponential 7.5% / 7.0% / 6.0% (so the range prior on the first looks). The range prior fading as
# n^-1.5 after 60 rather than staying: pairs until `differ` (80th percentile) on t3 / lognormal /
# exponential differences 2.8x / 3.1x / 2.7x the fixed-n t-test -> 2.1x / 2.3x / 2.2x (fading as
# 1/n: lognormal 2.5x). With known bounds (the asymptotic part at 0.9 alpha from 60 values, next to
# the betting CS) the returns cannot be heavier-tailed than the bounds, so the guard affords 6 Kish
# pseudo-observations: ever-miss of that part on lognormal(0, 1) clipped to [0, 20], 5,000 runs:
# 3 -> 5.8%, 5 -> 5.1%, 6 -> 4.7%, 8 -> 4.0%; its price, the width at n = 100 over the fixed-n
# t-interval on capped CartPole (0.98) with bounds 0:500: 2.18x, 2.35x, 2.43x, 2.57x.
KISH_PSEUDO = 3
KISH_PSEUDO_BOUNDED = 6
RANGE_PSEUDO = 8
RANGE_FULL_UNTIL = 60
RANGE_FADE_POWER = 1.5


def returns_identical(a: float, b: float) -> bool:
    """Equal up to 2 float32 ulps of the larger magnitude: ``|a - b| <= 2 eps32 max(|a|, |b|)``.

    Returns are sums of float32 rewards; two paths that store or round the same sum once through
    float32 each differ by at most 1 ulp apiece. More is a real difference: at 1e7 (float32 spacing
    1.0) the tolerance is 2.4, so 1e7 and 1e7 + 5 differ. Exact zero stays exact.
    """
    d = a - b
    if d == 0.0:
        return True
    m = max(abs(a), abs(b))
    return abs(d) <= 2.0 * EPS32 * m


def range_weight(n):
    """Weight of the range prior after n values: `RANGE_PSEUDO` up to `RANGE_FULL_UNTIL` values, times
    ``(RANGE_FULL_UNTIL / n)^RANGE_FADE_POWER`` after (the range seen keeps growing with heavy tails)."""
    n = np.asarray(n, dtype=float)
    return RANGE_PSEUDO * np.minimum(1.0, RANGE_FULL_UNTIL / n) ** RANGE_FADE_POWER


def guarded_variance(n: int, m2: float, lo: float, hi: float, m4: float | None = None,
                     kish: float = KISH_PSEUDO) -> float:
    """Plug-in variance that never collapses: ``max(m2/(n-1), (k_r (hi-lo)^2/4 + k_4 m4/m2 + m2) /
    (n + k_r + k_4))`` with k_4 = `kish` and k_r = `range_weight(n)`.

    `m2`, `m4`: sums of the squared and fourth-power deviations of n values from their mean, `lo`/`hi`:
    their min and max. Without `m4` its upper bound ``m4/m2 <= (hi - lo)^2`` (a deviation is at most the
    range) is used: never narrower. The max keeps the result from going below the unbiased estimate.
    """
    if n < 2:
        return math.nan
    span = hi - lo
    per_kish = span * span if m4 is None else (m4 / m2 if m2 > 0.0 else 0.0)
    k_range = float(range_weight(n))
    prior = k_range * 0.25 * span * span + kish * per_kish
    return max(m2 / (n - 1), (prior + m2) / (n + k_range + kish))


def guarded_asymptotic_cs_from_moments(
    n: int, mean: float, m2: float, lo: float, hi: float, alpha: float = 0.05, target_n: float = 100,
    burn_in: int = 30, m4: float | None = None, kish: float = KISH_PSEUDO,
) -> tuple[float, float] | None:
    """Waudby-Smith et al. (2021) asymptotic CS with `guarded_variance`; None before `burn_in`
    values or while all values are identical (``hi <= lo``): no interval rather than a zero-width one."""
    if n < max(2, burn_in) or not hi > lo:
        return None
    sd = math.sqrt(guarded_variance(n, m2, lo, hi, m4, kish))
    half = float(gaussian_mixture_half_width(n, sd, alpha, target_n=target_n))
    return (mean - half, mean + half)


def running_central_moments(x: np.ndarray):
    """Per look (last axis): count t, mean, and the sums of squared, cubed and fourth-power deviations
    from the running mean (from power sums of the values less the first: no cancellation at large means)."""
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    shift = x[..., :1]
    y = x - shift
    y2 = y * y
    s1, s2 = np.cumsum(y, axis=-1), np.cumsum(y2, axis=-1)
    s3, s4 = np.cumsum(y2 * y, axis=-1), np.cumsum(y2 * y2, axis=-1)
    m = s1 / t
    mm = m * m
    m2 = np.maximum(s2 - t * mm, 0.0)
    m3 = s3 - 3.0 * m * s2 + 3.0 * mm * s1 - t * mm * m
    m4 = np.maximum(s4 - 4.0 * m * s3 + 6.0 * mm * s2 - 3.0 * t * mm * mm, 0.0)
    return t, m + shift, m2, m3, m4


def guarded_asymptotic_cs(x, alpha: float = 0.05, target_n: float = 100, burn_in: int = 30,
                          kish: float = KISH_PSEUDO):
    """`guarded_asymptotic_cs_from_moments` at every look of `x` (last axis), vectorised for
    coverage simulations; ``(lo, hi)`` arrays, NaN where no interval is shown."""
    x = np.asarray(x, dtype=float)
    t, mean, m2, _m3, m4 = running_central_moments(x)
    span = np.maximum.accumulate(x, axis=-1) - np.minimum.accumulate(x, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        k_range = range_weight(t)
        per_kish = np.where(m2 > 0.0, m4 / m2, 0.0)
        prior = k_range * 0.25 * span * span + kish * per_kish
        var = np.maximum(m2 / (t - 1.0), (prior + m2) / (t + k_range + kish))
        half = gaussian_mixture_half_width(t, np.sqrt(var), alpha, target_n=target_n)
    hide = (t < max(2, burn_in)) | ~(span > 0.0)
    half = np.where(hide, np.nan, half)
    return mean - half, mean + half


def anytime_share_upper(k: int, n: int, alpha: float = 0.05) -> float:
    """Anytime-valid upper bound on a Bernoulli rate after k events in n trials: the upper end of
    Robbins' beta-mixture Beta(1/2, 1/2) confidence sequence (`beta_mixture_cs_scalar`). With k = 0
    it falls below 5% at n = 116 (alpha = 0.05)."""
    if n <= 0:
        return 1.0
    return beta_mixture_cs_scalar(int(k), int(n), alpha)[1]
