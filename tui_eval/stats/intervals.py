"""Fixed-n intervals: valid when the sample size was fixed in advance and the interval is read once.

These are for the FINAL report. Checking them after every episode and stopping when they look
decisive inflates the error far above alpha; the live view uses `sequences` instead.

Each function is pure (arrays or summary numbers in, ``(lo, hi)`` out) and cites its reference.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

__all__ = [
    "t_quantile",
    "t_interval",
    "t_interval_from_moments",
    "welch_interval_from_moments",
    "wilson_interval",
    "clopper_pearson_interval",
    "iqm",
    "iqm_fast",
    "iqm_bootstrap_ci",
]


@functools.lru_cache(maxsize=4096)
def t_quantile(df: float, q: float) -> float:
    """Student-t quantile, cached (the app asks for the same df on every refresh); `special.stdtrit` is what
    `scipy.stats.t.ppf` computes, without importing scipy.stats (seconds on a busy machine)."""
    return float(special.stdtrit(df, q))


@functools.lru_cache(maxsize=64)
def _z(q: float) -> float:
    return float(special.ndtri(q))


def t_interval_from_moments(n: int, mean: float, var: float, alpha: float = 0.05) -> tuple[float, float] | None:
    """Student's one-sample t interval ``mean ± t_{1-alpha/2, n-1} * s / sqrt(n)`` from summary numbers.

    Reference: "Student" (W. S. Gosset, 1908), *The probable error of a mean*, Biometrika 6(1):1-25.
    Equals ``scipy.stats.ttest_1samp(x, 0).confidence_interval(1 - alpha)``. None when n < 2.
    """
    if n < 2 or not math.isfinite(var):
        return None
    half = t_quantile(n - 1, 1.0 - alpha / 2.0) * math.sqrt(max(var, 0.0) / n)
    return (mean - half, mean + half)


def t_interval(x, alpha: float = 0.05) -> tuple[float, float] | None:
    """Student's one-sample t interval for the mean of the 1-d array `x` (see `t_interval_from_moments`)."""
    x = np.asarray(x, dtype=float)
    if x.size < 2:
        return None
    return t_interval_from_moments(x.size, float(x.mean()), float(x.var(ddof=1)), alpha)


def welch_interval_from_moments(
    n_a: int, mean_a: float, var_a: float, n_b: int, mean_b: float, var_b: float, alpha: float = 0.05
) -> tuple[float, float] | None:
    """Welch's unequal-variance t interval for ``mean_a - mean_b`` (Welch-Satterthwaite df).

    References: B. L. Welch (1947), *The generalization of Student's problem when several different
    population variances are involved*, Biometrika 34:28-35; F. E. Satterthwaite (1946).
    Equals ``scipy.stats.ttest_ind(a, b, equal_var=False).confidence_interval(1 - alpha)``.
    None when either side has fewer than 2 observations.
    """
    if n_a < 2 or n_b < 2:
        return None
    sa, sb = max(var_a, 0.0) / n_a, max(var_b, 0.0) / n_b
    d = mean_a - mean_b
    se2 = sa + sb
    if se2 == 0.0:
        return (d, d)
    fa, fb = sa / se2, sb / se2  # shares of the variance (scaled: no underflow for tiny variances)
    df = 1.0 / (fa * fa / (n_a - 1) + fb * fb / (n_b - 1))
    half = t_quantile(float(df), 1.0 - alpha / 2.0) * math.sqrt(se2)
    return (d - half, d + half)


def wilson_interval(k, n, alpha: float = 0.05):
    """Wilson score interval for a binomial proportion, in closed form (no continuity correction).

    Reference: E. B. Wilson (1927), *Probable inference, the law of succession, and statistical
    inference*, JASA 22(158):209-212; formulas as in R. G. Newcombe (1998), Statistics in Medicine 17.
    Equals ``scipy.stats.binomtest(k, n).proportion_ci(1 - alpha, method="wilson")`` (which also
    pins lo=0 at k=0 and hi=1 at k=n). Scalars give a tuple of floats (None when n == 0); arrays give
    a tuple of arrays.
    """
    z = _z(1.0 - alpha / 2.0)
    if np.ndim(k) == 0 and np.ndim(n) == 0:
        k, n = int(k), int(n)
        if n <= 0:
            return None
        p = k / n
        denom = 2.0 * (n + z * z)
        center = (2.0 * n * p + z * z) / denom
        delta = z / denom * math.sqrt(4.0 * n * p * (1.0 - p) + z * z)
        lo = 0.0 if k == 0 else center - delta
        hi = 1.0 if k == n else center + delta
        return (lo, hi)
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = k / n
    denom = 2.0 * (n + z * z)
    center = (2.0 * n * p + z * z) / denom
    delta = z / denom * np.sqrt(4.0 * n * p * (1.0 - p) + z * z)
    return (np.where(k == 0, 0.0, center - delta), np.where(k == n, 1.0, center + delta))


def clopper_pearson_interval(k: int, n: int, alpha: float = 0.05) -> tuple[float, float] | None:
    """Clopper-Pearson "exact" binomial interval from beta quantiles.

    Reference: C. J. Clopper, E. S. Pearson (1934), *The use of confidence or fiducial limits
    illustrated in the case of the binomial*, Biometrika 26(4):404-413.
    Equals ``scipy.stats.binomtest(k, n).proportion_ci(1 - alpha, method="exact")``.
    """
    if n <= 0:
        return None
    lo = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, alpha / 2.0))
    hi = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1.0 - alpha / 2.0))
    return (lo, hi)


def iqm(x, axis: int = -1):
    """Interquartile mean: the mean of the middle 50% of values, ``scipy.stats.trim_mean(x, 0.25)``.

    Reference: R. Agarwal, M. Schwarzer, P. S. Castro, A. Courville, M. G. Bellemare (2021), *Deep
    reinforcement learning at the edge of the statistical precipice*, NeurIPS (rliable's
    `metrics.aggregate_iqm`). Robust to outlier episodes, more efficient than the median.
    This is the reference definition; `iqm_fast` computes the same number faster.
    """
    from scipy import stats  # imported here: scipy.stats takes seconds to import, and only this needs it

    return stats.trim_mean(np.asarray(x, dtype=float), 0.25, axis=axis)


def iqm_fast(x, overwrite: bool = False):
    """`iqm` along the last axis via two single-pivot in-place partitions (numpy's multi-pivot
    partition is several times slower): the same trimmed multiset as `scipy.stats.trim_mean(x, 0.25,
    axis=-1)`, so equal up to floating-point summation order. About 8 ms at n = 1,000,000.
    `overwrite=True` partitions `x` itself (a float64 array) instead of a copy.
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    cut = int(0.25 * n)
    if cut == 0:
        return x.mean(axis=-1)
    keep = n - 2 * cut
    a = x if overwrite else x.copy()
    a.partition(cut, axis=-1)
    upper = a[..., cut:]
    upper.partition(keep - 1, axis=-1)
    return upper[..., :keep].mean(axis=-1)


def iqm_bootstrap_ci(
    x,
    alpha: float = 0.05,
    reps: int = 1000,
    max_resample: int = 500,
    rng: np.random.Generator | int | None = 0,
    point: float | None = None,
) -> tuple[float, float] | None:
    """Percentile-bootstrap (1-alpha) interval for the IQM of one task, with bounded cost.

    As rliable does for a single task (Agarwal et al. 2021; rliable's `get_interval_estimates`
    percentile bootstrap of the IQM; B. Efron (1979), *Bootstrap methods: another look at the
    jackknife*, Ann. Statist. 7(1)). rliable defaults to 50,000 resamples; `reps` (default 1000)
    keeps a refresh cheap.

    For n <= `max_resample` this is the plain percentile bootstrap: `reps` resamples of size n.
    For larger n it is the m-out-of-n bootstrap with m = `max_resample` (P. J. Bickel, F. Götze,
    W. R. van Zwet (1997), *Resampling fewer than n observations*, Statistica Sinica 7:1-31), its
    deviations rescaled by sqrt(m/n): ``[T + sqrt(m/n) (q_{a/2}(T*_m) - T), T + sqrt(m/n)
    (q_{1-a/2}(T*_m) - T)]`` with T the IQM of all n. It equals the percentile interval when m = n and
    is consistent for the trimmed mean (a smooth, asymptotically normal functional), so the cost is
    O(reps * m + n) whatever n is (about 20 ms at n = 1,000,000). `point`: the IQM of `x` if already
    known. None when n < 2.
    """
    x = np.asarray(x, dtype=float)
    n = x.size
    if n < 2:
        return None
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    m = min(n, int(max_resample))
    idx = rng.integers(0, n, size=(int(reps), m), dtype=np.int32 if n < 2**31 else np.int64)
    boots = iqm_fast(x[idx], overwrite=True)
    q_lo, q_hi = np.quantile(boots, [alpha / 2.0, 1.0 - alpha / 2.0])
    if m == n:
        return (float(q_lo), float(q_hi))
    t_hat = float(iqm_fast(x)) if point is None else float(point)
    scale = math.sqrt(m / n)
    return (t_hat + scale * (float(q_lo) - t_hat), t_hat + scale * (float(q_hi) - t_hat))
