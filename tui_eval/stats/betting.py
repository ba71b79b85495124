"""Betting confidence sequences for the mean of bounded data (Waudby-Smith & Ramdas 2023).

For data y_i in [0, 1] and a candidate mean m, the hedged capital process

    K_t(m) = max(theta K+_t(m), (1 - theta) K-_t(m)),
    K+_t(m) = prod_{i<=t} (1 + l+_i(m) (y_i - m)),   K-_t(m) = prod_{i<=t} (1 - l-_i(m) (y_i - m)),

is a nonnegative martingale with K_0 = 1 when m is the true mean, so by Ville's inequality
P(exists t: K_t(mu) >= 1/alpha) <= alpha, and ``C_t = {m : K_s(m) < 1/alpha for all s <= t}`` is a
(1-alpha) confidence sequence (the running intersection; Waudby-Smith & Ramdas 2023, Sec. 4, the
hedged capital process). The bets are their predictable plug-in ones:

    l_t = sqrt(2 log(2/alpha) / (s2_{t-1} t log(1 + t))),  l+_t(m) = min(l_t, c/m),  l-_t(m) = min(l_t, c/(1-m)),

with s2_t = (1/4 + sum_{i<=t} (y_i - mu_i)^2)/(t + 1) and mu_t = (1/2 + sum_{i<=t} y_i)/(t + 1) (the
same plug-ins as PrPl-EB), c = 1/2, theta = 1/2. They show it is narrower than PrPl-EB (their
simulations). The set is found on a grid of candidate means ("grid method"; the `confseq`
package's `hedged_cs`): the reported interval is the hull of the grid points never rejected, widened
by one grid step on each side.

Cost: a grid point, once rejected, is rejected for good, so only the hull of the survivors (the
window) is updated; the window shrinks with the interval, and the update is vectorised over a batch
of values x the window (`BettingState.extend`).

Reference: I. Waudby-Smith, A. Ramdas (2023), *Estimating means of bounded random variables by
betting*, JRSS-B 86(1):1-27 (arXiv:2010.09686).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["GRID", "plug_in_bets", "hedged_log_capital", "BettingState", "hedged_betting_cs"]

GRID = 1000  # grid steps on [0, 1] (the paper's and `confseq`'s default `breaks`)
_TRUNC = 0.5  # c: bets truncated at c/m and c/(1-m) (the paper's default)
_THETA = 0.5  # weight of the positive capital process in the hedge
_MAX_STEP = 1024  # values per step: <= 1024 factors in [1/2, 14] never underflow to 0 (overflow: a crossing)
_CELLS = 1 << 18  # values x runs x grid points per vectorised step (small arrays stay in cache)


def plug_in_bets(y: np.ndarray, t0: int, sum_y, q, s2_prev, alpha: float):
    """Predictable plug-in bets l_t for values `y` (runs x k) that follow `t0` earlier ones.

    `sum_y`, `q`, `s2_prev` (per run): the sum of earlier values, the sum of their squared
    deviations from the running regularised mean, and s2 after them (1/4 before any). Returns
    ``(bets, sum_y, q, s2)`` after the batch. Waudby-Smith & Ramdas (2023), Sec. 4.
    """
    k = y.shape[-1]
    t = np.arange(t0 + 1, t0 + k + 1, dtype=float)
    mu = (0.5 + (sum_y[:, None] + np.cumsum(y, axis=-1))) / (t + 1.0)
    e = y - mu
    q_t = q[:, None] + np.cumsum(e * e, axis=-1)
    s2 = (0.25 + q_t) / (t + 1.0)
    prev = np.concatenate([s2_prev[:, None], s2[:, :-1]], axis=-1)
    bets = np.sqrt(2.0 * math.log(2.0 / alpha) / (prev * t * np.log1p(t)))
    return bets, sum_y + y.sum(axis=-1), q_t[:, -1], s2[:, -1]


def hedged_log_capital(y, m, alpha: float = 0.05):
    """log K_t(m) of the hedged capital process at every look (last axis of `y`, in [0, 1]) for
    every candidate mean in `m` (a 1-d grid): shape ``y.shape + m.shape``. The plain reference form
    (O(t x grid) memory), used by the tests; `BettingState` computes the same incrementally."""
    y = np.atleast_2d(np.asarray(y, dtype=float))
    m = np.asarray(m, dtype=float)
    runs = y.shape[0]
    bets, *_ = plug_in_bets(y, 0, np.zeros(runs), np.zeros(runs), np.full(runs, 0.25), alpha)
    pos, neg = _factors(y, bets, m)
    return np.maximum(np.cumsum(np.log(pos), axis=1) + math.log(_THETA),
                      np.cumsum(np.log(neg), axis=1) + math.log(1.0 - _THETA))


def _factors(y, bets, m):
    """The capital factors 1 + l+(m)(y - m) and 1 - l-(m)(y - m): arrays ``y.shape + m.shape``."""
    with np.errstate(divide="ignore"):
        cap_pos, cap_neg = _TRUNC / m, _TRUNC / (1.0 - m)
    b = bets[..., None]
    d = y[..., None] - m
    pos = np.minimum(b, cap_pos)
    pos *= d
    pos += 1.0
    neg = np.minimum(b, cap_neg)
    neg *= d
    np.subtract(1.0, neg, out=neg)
    return pos, neg


class BettingState:
    """The hedged betting CS of `runs` independent series on [0, 1], updated incrementally.

    Keeps log K+ and log K- of the grid points in the window (the hull of the points never
    rejected, the same window for all runs) and each run's surviving points. `extend` takes the
    next values of every run (runs x k) and optionally returns every look's interval. In the
    probability-<= alpha event that every grid point of a run is rejected (or when data pile up
    between two grid points), the run keeps its last non-empty interval (frozen).
    """

    def __init__(self, alpha: float = 0.05, runs: int = 1, grid: int = GRID) -> None:
        self.alpha = float(alpha)
        # theta = 1/2: max(K+/2, K-/2) > 1/alpha  <=>  max(K+, K-) > 2/alpha
        self.log_thresh = math.log(1.0 / self.alpha) - math.log(_THETA)
        self.step = 1.0 / grid
        self.points = np.linspace(0.0, 1.0, grid + 1)
        self.t = 0
        self.a, self.b = 0, grid  # window: grid indices a..b (inclusive)
        self.sum_y = np.zeros(runs)
        self.q = np.zeros(runs)
        self.s2 = np.full(runs, 0.25)
        self.log_pos = np.zeros((runs, grid + 1))
        self.log_neg = np.zeros((runs, grid + 1))
        self.alive = np.ones((runs, grid + 1), dtype=bool)
        self.frozen = np.zeros(runs, dtype=bool)

    def interval(self):
        """(lo, hi) arrays per run on [0, 1]: the survivors' hull widened by one grid step."""
        return self._hull(self.alive)

    def _hull(self, alive):
        w = alive.shape[-1]
        first = np.argmax(alive, axis=-1)
        last = w - 1 - np.argmax(alive[..., ::-1], axis=-1)
        m = self.points[self.a : self.b + 1]
        return np.maximum(m[first] - self.step, 0.0), np.minimum(m[last] + self.step, 1.0)

    def extend(self, y, per_look: bool = False):
        """Feed the next values (runs x k, in [0, 1]); with `per_look`, return (lo, hi) runs x k."""
        y = np.clip(np.atleast_2d(np.asarray(y, dtype=float)), 0.0, 1.0)
        out_lo, out_hi = [], []
        i, k = 0, y.shape[1]
        while i < k:
            # small steps while the window is wide and shrinking fast, large ones later
            width = self.b - self.a + 1
            size = max(1, min(k - i, max(8, self.t), _MAX_STEP, _CELLS // (y.shape[0] * width)))
            lo, hi = self._step(y[:, i : i + size], per_look)
            if per_look:
                out_lo.append(lo)
                out_hi.append(hi)
            i += size
        if per_look:
            return np.concatenate(out_lo, axis=1), np.concatenate(out_hi, axis=1)
        return None

    def _step(self, y, per_look: bool):
        bets, self.sum_y, self.q, self.s2 = plug_in_bets(y, self.t, self.sum_y, self.q, self.s2, self.alpha)
        self.t += y.shape[1]
        m = self.points[self.a : self.b + 1]
        # time-major (k x runs x window). Products within the step instead of sums of logs (no log
        # per cell): the factors lie in [1/2, 14], so a product of <= _MAX_STEP never underflows to 0
        # (one that overflows to inf has crossed, as it should), and K_s > 1/alpha reads
        # prod_{step, <= s} > exp(log(1/alpha) - log K at the step's start).
        fac_pos, fac_neg = _factors(y.T, bets.T, m)
        prod_pos = np.cumprod(fac_pos, axis=0, out=fac_pos)
        prod_neg = np.cumprod(fac_neg, axis=0, out=fac_neg)
        with np.errstate(over="ignore"):
            crossed = prod_pos > np.exp(self.log_thresh - self.log_pos)
            crossed |= prod_neg > np.exp(self.log_thresh - self.log_neg)
        alive = ~np.logical_or.accumulate(crossed, axis=0, out=crossed)
        alive &= self.alive
        alive[:, self.frozen] = self.alive[self.frozen]
        empty = ~alive.any(axis=-1)  # k x runs
        if empty.any():
            alive = self._freeze(alive, empty)
        self.alive = alive[-1]
        with np.errstate(divide="ignore"):
            self.log_pos = self.log_pos + np.log(prod_pos[-1])
            self.log_neg = self.log_neg + np.log(prod_neg[-1])
        lo = hi = None
        if per_look:
            lo, hi = self._hull(alive)
            lo, hi = lo.T, hi.T
        self._shrink_window()
        return lo, hi

    def _freeze(self, alive, empty):
        """Runs whose survivors would all be rejected keep their last non-empty set from then on."""
        for r in np.flatnonzero(empty.any(axis=0)):
            j = int(np.argmax(empty[:, r]))
            keep = self.alive[r] if j == 0 else alive[j - 1, r]
            alive[j:, r] = keep
            self.frozen[r] = True
        return alive

    def _shrink_window(self) -> None:
        cols = np.flatnonzero(self.alive.any(axis=0))
        lo, hi = int(cols[0]), int(cols[-1])
        if lo > 0 or hi < self.alive.shape[1] - 1:
            self.a, self.b = self.a + lo, self.a + hi
            self.alive = self.alive[:, lo : hi + 1]
            self.log_pos = self.log_pos[:, lo : hi + 1]
            self.log_neg = self.log_neg[:, lo : hi + 1]


def hedged_betting_cs(x, lo: float = 0.0, hi: float = 1.0, alpha: float = 0.05, grid: int = GRID):
    """The hedged betting (1-alpha) CS at every look of `x` (runs x looks or one series) for data in
    [lo, hi]: ``(lo, hi)`` arrays shaped like `x`, in data units. Valid from the first look,
    non-asymptotically; the running intersection (the set never grows)."""
    x = np.asarray(x, dtype=float)
    flat = np.atleast_2d(x)
    span = hi - lo
    state = BettingState(alpha, runs=flat.shape[0], grid=grid)
    low, high = state.extend((flat - lo) / span, per_look=True)
    return (lo + span * low).reshape(x.shape), (lo + span * high).reshape(x.shape)
