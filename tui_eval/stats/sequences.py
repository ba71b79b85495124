"""Anytime-valid confidence sequences (CS): intervals that may be looked at after every episode.

A (1-alpha) confidence sequence (C_t) satisfies P(for all t: mu in C_t) >= 1 - alpha, so a user may
watch it shrink and stop whenever they like (Darling & Robbins 1967). The fixed-n intervals of
`intervals` only satisfy P(mu in C_n) >= 1 - alpha for one n fixed in advance.

Every method here is a short pure function on arrays (one interval per look, along the last axis),
and those used per episode also have an O(1)-per-update form (running sums).

References
----------
- D. A. Darling, H. Robbins (1967), *Confidence sequences for mean, variance, and median*, PNAS 58.
- H. Robbins (1970), *Statistical methods related to the law of the iterated logarithm*, Ann. Math.
  Statist. 41(5):1397-1409 (normal and beta mixtures).
- S. R. Howard, A. Ramdas, J. McAuliffe, J. Sekhon (2021), *Time-uniform, nonparametric,
  nonasymptotic confidence sequences*, Ann. Statist. 49(2) (arXiv:1810.08240).
- I. Waudby-Smith, A. Ramdas (2023), *Estimating means of bounded random variables by betting*,
  JRSS-B 86(1) (arXiv:2010.09686).
- I. Waudby-Smith, D. Arbour, R. Sinha, E. H. Kennedy, A. Ramdas (2021), *Time-uniform central limit
  theory and asymptotic confidence sequences* (arXiv:2103.06476).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

_sqrt = math.sqrt
_log1p = math.log1p

__all__ = [
    "best_rho2",
    "gaussian_mixture_half_width",
    "asymptotic_cs_from_moments",
    "asymptotic_cs",
    "normal_mixture_cs",
    "normal_mixture_cs_from_mean",
    "prpl_eb_cs",
    "PrPlEB",
    "beta_mixture_log_martingale",
    "beta_mixture_cs",
    "beta_mixture_cs_scalar",
    "running_intersection",
]


# --------------------------------------------------------------------------------------------------
# Gaussian (normal) mixture boundary: asymptotic CS for unbounded data, Howard et al. for sub-Gaussian
# --------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def best_rho2(target_n: float, alpha: float = 0.05) -> float:
    """Mixture precision rho^2 minimising the Gaussian-mixture CS width at n = `target_n`.

    Minimising ``(n rho^2 + 1)/(n^2 rho^2) * log(sqrt(n rho^2 + 1)/alpha)`` over rho^2 gives
    ``u = n rho^2 + 1 = -W_{-1}(-alpha^2 / e)`` (W_{-1}: lower branch of Lambert's W), i.e.
    ``rho^2 = (-W_{-1}(-alpha^2 e^{-1}) - 1) / n``; approximately ``(-2 log alpha + log(1 - 2 log alpha))
    / n``. Reference: Waudby-Smith et al. (2021), arXiv:2103.06476, Sec. 2 (tuning rho for t*);
    Howard et al. (2021), Sec. 3.5 (the same optimisation for the normal mixture).
    """
    u = -special.lambertw(-(alpha**2) / math.e, k=-1).real
    return float((u - 1.0) / float(target_n))


def gaussian_mixture_half_width(n, sd, alpha: float = 0.05, rho2: float | None = None, target_n: float = 100):
    """Half-width of the two-sided Gaussian-mixture CS for a mean: ``sd * sqrt(2 (n rho^2 + 1) /
    (n^2 rho^2) * log(sqrt(n rho^2 + 1) / alpha))``.

    From Robbins' normal mixture martingale ``(n rho^2 + 1)^{-1/2} exp(rho^2 S_n^2 / (2 (n rho^2 + 1)))``
    for standardised increments (Robbins 1970; Howard et al. 2021 eq. (3.7), two-sided). With `sd` a
    known sub-Gaussian scale this is Howard et al.'s normal-mixture CS (non-asymptotic); with `sd` the
    running sample standard deviation it is the Gaussian-mixture asymptotic CS of Waudby-Smith et al.
    (2021), Theorem 2.2. Vectorised over `n` and `sd`.
    """
    if rho2 is None:
        rho2 = best_rho2(target_n, alpha)
    n = np.asarray(n, dtype=float)
    u = n * rho2 + 1.0
    return sd * np.sqrt(2.0 * u / (n * n * rho2) * np.log(np.sqrt(u) / alpha))


def asymptotic_cs_from_moments(
    n: int, mean: float, var: float, alpha: float = 0.05, target_n: float = 100
) -> tuple[float, float] | None:
    """Asymptotic (1-alpha) CS for the mean from running summary numbers (O(1)).

    ``mean ± sigma_hat * sqrt(2 (n rho^2 + 1) / (n^2 rho^2) * log(sqrt(n rho^2 + 1) / alpha))`` with
    rho^2 = `best_rho2(target_n, alpha)`. Reference: Waudby-Smith, Arbour, Sinha, Kennedy, Ramdas
    (2021), *Time-uniform central limit theory and asymptotic confidence sequences*, arXiv:2103.06476,
    Theorem 2.2 (Gaussian-mixture asymptotic CS). Needs only finite variance (unbounded returns are
    fine); its coverage is asymptotic, so at very small n it can be optimistic. None when n < 2.
    """
    if n < 2 or not math.isfinite(var):
        return None
    half = float(gaussian_mixture_half_width(n, math.sqrt(max(var, 0.0)), alpha, target_n=target_n))
    return (mean - half, mean + half)


def _running_mean_var(x: np.ndarray):
    """Per-look mean and unbiased variance (NaN at look 1) along the last axis, vectorised."""
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    shift = x[..., :1]  # centre on the first value: avoids cancellation in the sum of squares
    y = x - shift
    s1 = np.cumsum(y, axis=-1)
    s2 = np.cumsum(y * y, axis=-1)
    mean = s1 / t + shift
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.maximum(s2 - s1 * s1 / t, 0.0) / (t - 1.0)
    return t, mean, var


def asymptotic_cs(x, alpha: float = 0.05, target_n: float = 100):
    """`asymptotic_cs_from_moments` at every look of `x` (last axis); returns ``(lo, hi)`` arrays.

    Look 1 has no variance estimate: its bounds are NaN (treat as "no interval yet").
    """
    x = np.asarray(x, dtype=float)
    t, mean, var = _running_mean_var(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = gaussian_mixture_half_width(t, np.sqrt(var), alpha, target_n=target_n)
    return mean - half, mean + half


def normal_mixture_cs_from_mean(
    n: int, mean: float, lo: float, hi: float, alpha: float = 0.05, target_n: float = 100
) -> tuple[float, float] | None:
    """Howard et al. (2021) two-sided normal-mixture CS for data bounded in [lo, hi] (O(1)).

    Bounded data are sigma-sub-Gaussian with sigma = (hi - lo)/2 (Hoeffding 1963), so
    ``mean ± gaussian_mixture_half_width(n, (hi - lo)/2)`` holds for all n simultaneously with
    probability >= 1 - alpha, non-asymptotically. Clipped to [lo, hi]. None when n < 1.
    """
    if n < 1:
        return None
    half = float(gaussian_mixture_half_width(n, (hi - lo) / 2.0, alpha, target_n=target_n))
    return (max(mean - half, lo), min(mean + half, hi))


def normal_mixture_cs(x, lo: float, hi: float, alpha: float = 0.05, target_n: float = 100):
    """`normal_mixture_cs_from_mean` at every look of `x` (last axis); returns ``(lo, hi)`` arrays."""
    x = np.asarray(x, dtype=float)
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mean = np.cumsum(x, axis=-1) / t
    half = gaussian_mixture_half_width(t, (hi - lo) / 2.0, alpha, target_n=target_n)
    return np.maximum(mean - half, lo), np.minimum(mean + half, hi)


# --------------------------------------------------------------------------------------------------
# Predictable plug-in empirical Bernstein (PrPl-EB) for bounded data
# --------------------------------------------------------------------------------------------------


def prpl_eb_cs(x, lo: float = 0.0, hi: float = 1.0, alpha: float = 0.05, c: float = 0.5, intersect: bool = False):
    """PrPl-EB confidence sequence for the mean of data bounded in [lo, hi]; ``(lo, hi)`` per look.

    Reference: Waudby-Smith & Ramdas (2023), *Estimating means of bounded random variables by
    betting*, JRSS-B, arXiv:2010.09686, Theorem 2 with the predictable plug-in of eq. (13)-(15).
    On y = (x - lo)/(hi - lo) in [0, 1]:

      mu_t = (1/2 + sum_{i<=t} y_i)/(t + 1),  s2_t = (1/4 + sum_{i<=t} (y_i - mu_i)^2)/(t + 1),
      lambda_t = min(sqrt(2 log(2/alpha) / (s2_{t-1} t log(1 + t))), c),
      C_t = sum lambda_i y_i / sum lambda_i  ±  (log(2/alpha) + sum v_i psi_E(lambda_i)) / sum lambda_i,

    with v_i = 4 (y_i - mu_{i-1})^2 and psi_E(l) = (-log(1 - l) - l)/4. Valid non-asymptotically for
    every n. Its centre is a lambda-weighted mean (early looks weigh more), so it need not contain the
    plain sample mean. Vectorised over leading axes; `intersect` takes the running intersection (also
    valid).
    """
    y = (np.asarray(x, dtype=float) - lo) / (hi - lo)
    t = np.arange(1, y.shape[-1] + 1, dtype=float)
    mu = (0.5 + np.cumsum(y, axis=-1)) / (t + 1.0)
    s2 = (0.25 + np.cumsum((y - mu) ** 2, axis=-1)) / (t + 1.0)
    pad = [(0, 0)] * (y.ndim - 1) + [(1, 0)]
    mu_prev = np.pad(mu[..., :-1], pad, constant_values=0.5)
    s2_prev = np.pad(s2[..., :-1], pad, constant_values=0.25)
    log2a = math.log(2.0 / alpha)
    lam = np.minimum(np.sqrt(2.0 * log2a / (s2_prev * t * np.log1p(t))), c)
    sum_lam = np.cumsum(lam, axis=-1)
    center = np.cumsum(lam * y, axis=-1) / sum_lam
    psi = (y - mu_prev) ** 2 * (-np.log1p(-lam) - lam)  # v_i * psi_E(lambda_i)
    margin = (log2a + np.cumsum(psi, axis=-1)) / sum_lam
    low = np.maximum(center - margin, 0.0)
    high = np.minimum(center + margin, 1.0)
    if intersect:
        low, high = running_intersection(low, high)
    return lo + (hi - lo) * low, lo + (hi - lo) * high


def running_intersection(low, high):
    """Running intersection of a CS along the last axis: ``max_{s<=t} low_s``, ``min_{s<=t} high_s``.

    A CS holds at all times on one event of probability >= 1 - alpha, so its running intersection
    holds on the same event (Howard et al. 2021, Sec. 2; Darling & Robbins 1967).
    """
    return np.maximum.accumulate(low, axis=-1), np.minimum.accumulate(high, axis=-1)


class PrPlEB:
    """O(1)-per-update PrPl-EB confidence sequence (see `prpl_eb_cs`), with running intersection.

    State is a handful of running sums; `add` is plain float arithmetic (about 1.5 µs), `extend` the
    same update vectorised over a batch. `interval()` returns the running intersection (falling back to
    the current interval in the probability-<=alpha event that the intersection is empty).
    """

    __slots__ = (
        "lo", "hi", "alpha", "c", "_log2a", "_two_log2a", "_span", "_inv_span", "t", "_sum_y", "_q",
        "_mu", "_s2", "_sum_lam", "_sum_lam_y", "_sum_psi", "_ilo", "_ihi",
    )

    def __init__(self, lo: float, hi: float, alpha: float = 0.05, c: float = 0.5) -> None:
        if not hi > lo:
            raise ValueError(f"return bounds need lo < hi, got [{lo}, {hi}]")
        self.lo, self.hi, self.alpha, self.c = float(lo), float(hi), float(alpha), float(c)
        self._log2a = math.log(2.0 / alpha)
        self._two_log2a = 2.0 * self._log2a
        self._span = self.hi - self.lo
        self._inv_span = 1.0 / self._span
        self.t = 0
        self._sum_y = 0.0
        self._q = 0.0
        self._mu = 0.5  # mu_0: the prior mean
        self._s2 = 0.25  # sigma^2_0: the prior variance
        self._sum_lam = 0.0
        self._sum_lam_y = 0.0
        self._sum_psi = 0.0
        self._ilo = 0.0
        self._ihi = 1.0

    def add(self, x: float) -> None:
        """One observation x in [lo, hi]: update the running sums and the running intersection."""
        y = (x - self.lo) * self._inv_span
        t = self.t + 1
        self.t = t
        lam = _sqrt(self._two_log2a / (self._s2 * t * _log1p(t)))  # predictable: uses s2_{t-1}
        if lam > self.c:
            lam = self.c
        d = y - self._mu  # mu_{t-1}
        sum_lam = self._sum_lam + lam
        self._sum_lam = sum_lam
        sum_lam_y = self._sum_lam_y + lam * y
        self._sum_lam_y = sum_lam_y
        sum_psi = self._sum_psi + d * d * (-_log1p(-lam) - lam)  # v_t psi_E(lambda_t)
        self._sum_psi = sum_psi
        sum_y = self._sum_y + y
        self._sum_y = sum_y
        mu = (0.5 + sum_y) / (t + 1)
        e = y - mu
        q = self._q + e * e
        self._q = q
        self._mu = mu
        self._s2 = (0.25 + q) / (t + 1)
        center = sum_lam_y / sum_lam
        margin = (self._log2a + sum_psi) / sum_lam
        if center - margin > self._ilo:
            self._ilo = center - margin
        if center + margin < self._ihi:
            self._ihi = center + margin

    def extend(self, xs) -> None:
        """Many observations at once: the same state as calling `add` on each (up to rounding),
        vectorised (about 30 ns per value), so a caller can store values and catch up in batches."""
        y = (np.asarray(xs, dtype=float).ravel() - self.lo) * self._inv_span
        k = y.size
        if k == 0:
            return
        t = np.arange(self.t + 1, self.t + k + 1, dtype=float)
        mu = (0.5 + (self._sum_y + np.cumsum(y))) / (t + 1.0)
        e = y - mu
        q = self._q + np.cumsum(e * e)
        s2 = (0.25 + q) / (t + 1.0)
        mu_prev = np.empty(k)
        mu_prev[0] = self._mu
        mu_prev[1:] = mu[:-1]
        s2_prev = np.empty(k)
        s2_prev[0] = self._s2
        s2_prev[1:] = s2[:-1]
        lam = np.minimum(np.sqrt(self._two_log2a / (s2_prev * t * np.log1p(t))), self.c)
        d = y - mu_prev
        sum_lam = self._sum_lam + np.cumsum(lam)
        sum_lam_y = self._sum_lam_y + np.cumsum(lam * y)
        sum_psi = self._sum_psi + np.cumsum(d * d * (-np.log1p(-lam) - lam))
        center = sum_lam_y / sum_lam
        margin = (self._log2a + sum_psi) / sum_lam
        self._ilo = max(self._ilo, float(np.max(center - margin)))
        self._ihi = min(self._ihi, float(np.min(center + margin)))
        self.t += k
        self._sum_y += float(y.sum())
        self._q = float(q[-1])
        self._mu = float(mu[-1])
        self._s2 = float(s2[-1])
        self._sum_lam = float(sum_lam[-1])
        self._sum_lam_y = float(sum_lam_y[-1])
        self._sum_psi = float(sum_psi[-1])

    def current(self) -> tuple[float, float] | None:
        """This look's interval (no intersection), in data units."""
        if self.t == 0:
            return None
        center = self._sum_lam_y / self._sum_lam
        margin = (self._log2a + self._sum_psi) / self._sum_lam
        return (self.lo + self._span * max(center - margin, 0.0), self.lo + self._span * min(center + margin, 1.0))

    def interval(self) -> tuple[float, float] | None:
        """The running intersection up to now, in data units; None before the first observation."""
        if self.t == 0:
            return None
        if self._ilo > self._ihi:
            return self.current()
        return (self.lo + self._span * max(self._ilo, 0.0), self.lo + self._span * min(self._ihi, 1.0))


# --------------------------------------------------------------------------------------------------
# Robbins' beta-binomial mixture for Bernoulli rates
# --------------------------------------------------------------------------------------------------


def beta_mixture_log_martingale(k, n, p, a: float = 0.5, b: float = 0.5):
    """log of Robbins' beta-mixture likelihood ratio for H0: rate = p after k successes in n trials.

    ``M_n(p) = B(a + k, b + n - k) / B(a, b) / (p^k (1 - p)^(n - k))`` is a nonnegative martingale
    with M_0 = 1 under H0, so by Ville's inequality P(exists n: M_n(p) >= 1/alpha) <= alpha (Robbins
    1970; Howard et al. 2021, Sec. 3.3 / Prop. 6 discrete mixtures). Vectorised.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    return (
        special.betaln(a + k, b + n - k)
        - special.betaln(a, b)
        - special.xlogy(k, p)
        - special.xlog1py(n - k, -p)
    )


def beta_mixture_cs(k, n, alpha: float = 0.05, a: float = 0.5, b: float = 0.5, iters: int = 60):
    """Robbins' beta-mixture (1-alpha) confidence sequence for a Bernoulli rate: ``{p : M_n(p) < 1/alpha}``.

    `beta_mixture_log_martingale` is convex in p with its minimum (<= 0) at k/n, so the set is an
    interval around k/n; its ends are found by vectorised bisection (`iters` halvings, error
    < 2^-iters). Default prior Beta(1/2, 1/2). Reference: H. Robbins (1970), Ann. Math. Statist. 41(5);
    Howard et al. (2021). Returns ``(lo, hi)`` arrays shaped like k and n (n >= 1).
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    k, n = np.broadcast_arrays(k, n)
    thresh = special.betaln(a + k, b + n - k) - special.betaln(a, b) - math.log(1.0 / alpha)
    phat = k / n

    def inside(p):  # log M_n(p) < log(1/alpha)  <=>  k log p + (n-k) log(1-p) > thresh
        return special.xlogy(k, p) + special.xlog1py(n - k, -p) > thresh

    # lower end: in [0, phat]; outside near 0 (when k > 0), inside at phat
    left, right = np.zeros_like(phat), phat.copy()
    for _ in range(iters):
        mid = 0.5 * (left + right)
        ok = inside(mid)
        right = np.where(ok, mid, right)
        left = np.where(ok, left, mid)
    lower = np.where(k == 0, 0.0, left)  # the outer end: conservative by < 2^-iters
    # upper end: in [phat, 1]
    left, right = phat.copy(), np.ones_like(phat)
    for _ in range(iters):
        mid = 0.5 * (left + right)
        ok = inside(mid)
        left = np.where(ok, mid, left)
        right = np.where(ok, right, mid)
    upper = np.where(k == n, 1.0, right)
    return lower, upper


def _lbeta(x: float, y: float) -> float:
    return math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)


@functools.lru_cache(maxsize=8192)
def beta_mixture_cs_scalar(k: int, n: int, alpha: float = 0.05, a: float = 0.5, b: float = 0.5) -> tuple[float, float]:
    """`beta_mixture_cs` for one (k, n) in plain floats (about 50 µs), cached per (k, n, alpha, a, b)."""
    if n <= 0:
        return (0.0, 1.0)
    thresh = _lbeta(a + k, b + n - k) - _lbeta(a, b) - math.log(1.0 / alpha)
    phat = k / n
    log, log1p = math.log, math.log1p

    def inside(p: float) -> bool:
        v = (k * log(p) if k else 0.0) + ((n - k) * log1p(-p) if n - k else 0.0)
        return v > thresh

    if k == 0:
        lower = 0.0
    else:
        left, right = 0.0, phat
        for _ in range(60):
            mid = 0.5 * (left + right)
            if inside(mid):
                right = mid
            else:
                left = mid
        lower = left  # the outer end: conservative by < 2^-60
    if k == n:
        upper = 1.0
    else:
        left, right = phat, 1.0
        for _ in range(60):
            mid = 0.5 * (left + right)
            if inside(mid):
                left = mid
            else:
                right = mid
        upper = right
    return (lower, upper)
