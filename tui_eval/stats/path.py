"""Per-path statistics, updated in O(1) per episode and summarised on demand.

`PathStats.add` is the hot path (one call per finished episode, possibly millions): plain float
arithmetic, no numpy calls except one element store. `PathStats.summary` is called by the app about
once a second (and by every reader of a finished run); its costly parts (IQM bootstrap, beta-mixture
bounds) are cached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tui_eval.records import EpisodeRecord

from .betting import BettingState
from .combine import ASYMPTOTIC_JOINS_AT, ASYMPTOTIC_SHARE, intersect
from .declared import Shared, declared
from .episode_terms import TermTally
from .guards import KISH_PSEUDO_BOUNDED, guarded_asymptotic_cs_from_moments
from .intervals import iqm_bootstrap_ci, iqm_fast, wilson_interval
from .sequences import PrPlEB, beta_mixture_cs_scalar, normal_mixture_cs_from_mean
from .tail_guard import tail_guarded_cs_from_moments

__all__ = ["PathStats", "ReturnsSnapshot", "ASYMPTOTIC_CS", "BETTING_CS", "PRPL_EB_CS", "NORMAL_MIXTURE_CS",
           "BETA_MIXTURE_CS"]

ASYMPTOTIC_CS = "asymptotic-cs, variance guarded (Waudby-Smith et al. 2021)"
BETTING_CS = ("hedged betting, bounded [{lo:g}, {hi:g}] (Waudby-Smith & Ramdas 2023) at {bet:.0%} of alpha "
              "∩ asymptotic-cs, variance guarded (Waudby-Smith et al. 2021) at {asym:.0%}")
PRPL_EB_CS = "PrPl-EB, bounded [{lo:g}, {hi:g}] (Waudby-Smith & Ramdas 2023)"
NORMAL_MIXTURE_CS = "normal-mixture, bounded [{lo:g}, {hi:g}] (Howard et al. 2021)"
BETA_MIXTURE_CS = "beta-mixture Beta(1/2,1/2) (Robbins 1970)"

# PrPl-EB: the returns buffer is fed to the running sums in vectorised batches of this size (and
# before every summary): the same state as one update per episode, at a fraction of the cost.
_EB_BATCH = 4096

# IQM: exact point estimate on every refresh up to this many returns; above it the point estimate
# and its bootstrap interval are recomputed only after 1% new episodes.
_IQM_FRESH_MAX_N = 100_000

#: (lo, hi) of every episode's return, or (lo, hi, where they came from)
ReturnBounds = tuple[float, float] | tuple[float, float, str]


@dataclass(frozen=True, slots=True, eq=False)
class ReturnsSnapshot:
    """One path's valid returns as they were when taken (under the lock records are added under).

    `returns` is a read-only view of the first `n` entries of the path's append-only buffer: entries
    below `n` are never written again (growing the buffer copies them to a new array), so the view is
    as good as a copy and costs nothing.
    """

    n: int
    invalid: int
    returns: np.ndarray
    #: the same token for every snapshot of one PathStats: later snapshots of a series only add returns
    series: object


def _pair(iv) -> list[float] | None:
    if iv is None:
        return None
    lo, hi = float(iv[0]), float(iv[1])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return [lo, hi]


class PathStats:
    """Running statistics of one inference path's episodes.

    Returns: only VALID episodes (an invalid episode's return is partial) with a finite return; an
    episode flagged valid whose return is not finite is counted as invalid. Rates: over ALL episodes
    (invalid ones count as failures).

    Parameters
    ----------
    return_bounds: known (lo, hi) or (lo, hi, where they came from) for every episode's return. Enables
        a non-asymptotic bounded-data CS (by default the hedged betting CS intersected with the
        guarded asymptotic CS, `combine`), valid from the first episode. If a valid
        return falls outside, the bounds were wrong: the path falls back to the asymptotic CS and
        `cs_method` says so.
    alpha: 1 - confidence level of every interval (0.05: the "95" in the key names).
    target_n: the episode count at which the asymptotic / normal-mixture CS is tuned to be tightest.
    burn_in: the asymptotic CS (unbounded returns) is reported from this many valid episodes on, and
        only once two distinct returns were seen; it is guarded on the side of the long tail
        (`tail_guard`) and never has zero width. Its coverage is asymptotic (the
        README gives the measured table).
    bounded_cs: "betting" (hedged betting ∩ asymptotic, Waudby-Smith & Ramdas 2023 / Waudby-Smith et al.
        2021), "prpl-eb" (Waudby-Smith & Ramdas 2023) or "normal-mixture" (Howard et al. 2021).
    """

    def __init__(
        self,
        return_bounds: ReturnBounds | None = None,
        alpha: float = 0.05,
        *,
        target_n: int = 100,
        burn_in: int = 30,
        bounded_cs: str = "betting",
    ) -> None:
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if bounded_cs not in ("betting", "prpl-eb", "normal-mixture"):
            raise ValueError(f"bounded_cs must be 'betting', 'prpl-eb' or 'normal-mixture', got {bounded_cs!r}")
        self.alpha = float(alpha)
        self.target_n = int(target_n)
        self.burn_in = max(2, int(burn_in))
        self.bounded_cs = bounded_cs
        self.return_bounds: tuple[float, float] | None = None
        self.bounds_source: str | None = None
        self._eb: PrPlEB | None = None
        self._bet: BettingState | None = None
        self._bounds_ok = False
        self._blo = -math.inf
        self._bhi = math.inf
        if return_bounds is not None:
            lo, hi = float(return_bounds[0]), float(return_bounds[1])
            if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
                raise ValueError(f"return_bounds needs finite lo < hi, got {return_bounds!r}")
            self.return_bounds = (lo, hi)
            self.bounds_source = str(return_bounds[2]) if len(return_bounds) > 2 else "given"
            self._bounds_ok = True
            tol = 1e-9 * (hi - lo)
            self._blo, self._bhi = lo - tol, hi + tol
            if bounded_cs == "prpl-eb":
                self._eb = PrPlEB(lo, hi, alpha)
            elif bounded_cs == "betting":
                self._bet = BettingState((1.0 - ASYMPTOTIC_SHARE) * alpha)
        self._series = object()  # identifies this series in its ReturnsSnapshots
        # counts over all episodes
        self.episodes = self.invalid = 0
        self.terms = TermTally()  # termination and reward terms, where the env names them
        self.successes = 0
        self.has_success = False
        # Welford over valid returns
        self.n = 0
        self._mean = 0.0
        self._m2 = 0.0
        self._pow, self._pow_n = np.zeros(4), 0  # power sums 1-4 of (value - first value) over _pow_n values
        self._min = math.inf
        self._max = -math.inf
        self._len_sum = 0
        # returns buffer (doubling)
        self._buf = np.empty(1024, dtype=np.float64)
        self._cap = 1024
        # caches
        self._scratch = np.empty(0, dtype=np.float64)
        self._iqm_n = -1
        self._iqm: float | None = None
        self._iqm_ci_n = -1
        self._iqm_ci: list[float] | None = None

    # ------------------------------------------------------------------ hot path
    def add(self, record: EpisodeRecord) -> None:
        """Account one finished episode: O(1), plain float arithmetic."""
        self.episodes += 1
        if record.termination is not None or record.reward_terms:
            self.terms.add(record)
        s = record.success
        if s is not None:
            self.has_success = True
            if s:  # EpisodeRecord makes an invalid episode's success False
                self.successes += 1
        x = record.ret
        if record.invalid or x - x != 0.0:  # x - x != 0 for inf and nan
            self.invalid += 1
            return
        self.add_value(float(x), record.length)

    def add_value(self, x: float, length: int = 0) -> None:
        """Account one valid, finite return (`add` without the episode bookkeeping).

        The value is written to the buffer before `n` counts it, so that `returns()` never includes an
        unwritten entry."""
        n = self.n + 1
        if n > self._cap:
            grown = np.empty(2 * self._cap, dtype=np.float64)
            grown[: n - 1] = self._buf[: n - 1]
            self._buf = grown
            self._cap = 2 * self._cap
        self._buf[n - 1] = x
        self.n = n
        delta = x - self._mean
        mean = self._mean + delta / n
        self._mean = mean
        self._m2 += delta * (x - mean)
        if x < self._min:
            self._min = x
        if x > self._max:
            self._max = x
        self._len_sum += length
        if self._bounds_ok:
            if x < self._blo or x > self._bhi:
                self._bounds_ok = False  # the bounds were wrong: stop claiming a bounded-data CS
            elif self._eb is not None and n - self._eb.t >= _EB_BATCH:
                self._eb_catch_up()
            elif self._bet is not None and n - self._bet.t >= _EB_BATCH:
                self._bet_catch_up()

    def _central_moments(self) -> tuple[float, float]:
        """(sum of cubed, sum of fourth-power deviations) of the valid returns from their mean, from
        power sums of the returns less the first (caught up from the buffer, vectorised: nothing on the
        hot path)."""
        n = self.n
        if self._pow_n < n:
            y = self._buf[self._pow_n : n] - self._buf[0]
            y2 = y * y
            self._pow += (y.sum(), y2.sum(), (y2 * y).sum(), (y2 * y2).sum())
            self._pow_n = n
        if n == 0:
            return 0.0, 0.0
        s1, s2, s3, s4 = self._pow.tolist()
        m = s1 / n
        mm = m * m
        m3 = s3 - 3.0 * m * s2 + 3.0 * mm * s1 - n * mm * m
        return m3, max(s4 - 4.0 * m * s3 + 6.0 * mm * s2 - 3.0 * n * mm * mm, 0.0)

    @property
    def m3(self) -> float:
        """Sum of the cubed deviations of the valid returns from their mean (its sign: the side of the
        long tail)."""
        return self._central_moments()[0]

    @property
    def m4(self) -> float:
        """Sum of the fourth-power deviations of the valid returns from their mean."""
        return self._central_moments()[1]

    @property
    def return_bounds_ok(self) -> bool:
        """No valid return fell outside the given bounds (False when none were given)."""
        return self._bounds_ok

    def _eb_catch_up(self) -> None:
        eb = self._eb
        if eb is not None and self._bounds_ok and eb.t < self.n:
            eb.extend(self._buf[eb.t : self.n])  # within a 1e-9 relative tolerance of [lo, hi]

    def _bet_catch_up(self) -> None:
        bet = self._bet
        if bet is not None and self._bounds_ok and bet.t < self.n:
            lo, hi = self.return_bounds  # type: ignore[misc]
            bet.extend((self._buf[bet.t : self.n] - lo) / (hi - lo))

    def _betting_cs(self, lo: float, hi: float) -> tuple[tuple[float, float] | None, str]:
        """The hedged betting CS (its share of alpha) ∩ the guarded asymptotic CS (the rest)."""
        self._bet_catch_up()
        bet = self._bet
        assert bet is not None
        if bet.t == 0:
            return None, BETTING_CS.format(lo=lo, hi=hi, bet=1 - ASYMPTOTIC_SHARE, asym=ASYMPTOTIC_SHARE)
        blo, bhi = bet.interval()
        span = hi - lo
        betting = (lo + span * float(blo[0]), lo + span * float(bhi[0]))
        asym = guarded_asymptotic_cs_from_moments(self.n, self._mean, self._m2, self._min, self._max,
                                                  ASYMPTOTIC_SHARE * self.alpha, self.target_n,
                                                  max(self.burn_in, ASYMPTOTIC_JOINS_AT), self.m4,
                                                  kish=KISH_PSEUDO_BOUNDED)
        return intersect(betting, asym), BETTING_CS.format(lo=lo, hi=hi, bet=1 - ASYMPTOTIC_SHARE,
                                                           asym=ASYMPTOTIC_SHARE)

    # ------------------------------------------------------------------ views
    def returns(self) -> np.ndarray:
        """The valid returns so far, in arrival order (a read-only view)."""
        v = self._buf[: self.n]
        v.flags.writeable = False
        return v

    def returns_snapshot(self) -> ReturnsSnapshot:
        """The valid returns and the counts, frozen: take it under the lock records are added under."""
        return ReturnsSnapshot(self.n, self.invalid, self.returns(), self._series)

    @property
    def mean(self) -> float | None:
        return self._mean if self.n else None

    @property
    def var(self) -> float:
        """Unbiased sample variance of valid returns; NaN when fewer than 2."""
        return self._m2 / (self.n - 1) if self.n > 1 else math.nan

    def cs(self, alpha: float | None = None) -> tuple[tuple[float, float] | None, str]:
        """The anytime-valid interval for the mean return and the method's name.

        `alpha` other than the constructor's is supported for the asymptotic and normal-mixture CSs
        (used by `Comparison`'s Bonferroni split); the PrPl-EB running state is tied to its alpha.
        """
        a = self.alpha if alpha is None else alpha
        n = self.n
        if self._bounds_ok and self.return_bounds is not None:
            lo, hi = self.return_bounds
            if self._eb is not None and a == self.alpha:
                self._eb_catch_up()
                return self._eb.interval(), PRPL_EB_CS.format(lo=lo, hi=hi)
            if self._bet is not None and a == self.alpha:
                return self._betting_cs(lo, hi)
            return (
                normal_mixture_cs_from_mean(n, self._mean, lo, hi, a, self.target_n),
                NORMAL_MIXTURE_CS.format(lo=lo, hi=hi),
            )
        method = ASYMPTOTIC_CS
        if self.return_bounds is not None:
            method += f"; a return fell outside the given bounds {list(self.return_bounds)}"
        if n >= self.burn_in and not self._max > self._min:
            method += f"; no interval: all {n} valid returns identical (give --return-bounds)"
        elif n < self.burn_in:
            method += f"; from {self.burn_in} valid returns"
        return (
            tail_guarded_cs_from_moments(
                n, self._mean, self._m2, self.m3, self._min, self._max, a, self.target_n, self.burn_in
            ),
            method,
        )

    def _iqm_summary(self) -> tuple[float | None, list[float] | None]:
        n = self.n
        if n == 0:
            return None, None
        x = self._buf[:n]
        step = max(1, self._iqm_ci_n // 100)
        ci_stale = self._iqm_ci_n < 0 or n - self._iqm_ci_n >= step
        if n != self._iqm_n and (n <= _IQM_FRESH_MAX_N or ci_stale):
            if self._scratch.shape[0] < n:  # reused across refreshes: no fresh pages per refresh
                self._scratch = np.empty(self._buf.shape[0], dtype=np.float64)
            work = self._scratch[:n]
            work[:] = x
            self._iqm = float(iqm_fast(work, overwrite=True))
            self._iqm_n = n
        if ci_stale:
            self._iqm_ci = _pair(iqm_bootstrap_ci(x, self.alpha, rng=n, point=self._iqm))
            self._iqm_ci_n = n
        return self._iqm, self._iqm_ci

    def _rate(self, k: int) -> tuple[float | None, list[float] | None, list[float] | None]:
        n = self.episodes
        if n == 0:
            return None, None, None
        return k / n, _pair(wilson_interval(k, n, self.alpha)), _pair(beta_mixture_cs_scalar(k, n, self.alpha))

    @property
    def minimum(self) -> float:
        return self._min

    @property
    def maximum(self) -> float:
        return self._max

    @property
    def mean_length(self) -> float | None:
        return self._len_sum / self.n if self.n else None

    def summary(self) -> dict[str, Any]:
        """Every declared statistic of this path (tui_eval/stats/declared.py), None where undefined, with how
        its intervals were made, as a JSON-serialisable dict."""
        cs = self.cs()
        shared = Shared(self.n, self.var, cs, self._iqm_summary(),
                        self._rate(self.successes) if self.has_success else (None, None, None),
                        self._rate(self.invalid))
        return {
            **{stat.key: stat.compute(self, shared) for stat in declared()},
            "cs_method": cs[1],
            "return_bounds": list(self.return_bounds) if self.return_bounds is not None else None,
            "bounds_source": self.bounds_source,
            "rate_cs_method": BETA_MIXTURE_CS,
            **self.terms.summary(),
        }
