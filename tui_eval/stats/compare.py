"""A vs B: do two inference paths of one checkpoint give different episodes?

Paired by seed: when both paths finished the same seed of the same block, the per-seed difference
d = ret_a - ret_b removes the seed's own difficulty from the comparison (a paired design; the
variance of d is usually far below var_a + var_b). Differences feed a `PathStats` of their own: with
return bounds [lo, hi], d lies in [-(hi - lo), hi - lo] and gets the bounded sequence (hedged betting
∩ guarded asymptotic, `combine`), valid from the first pair; without, the asymptotic CS guarded
on the side of the long tail (`tail_guard`, never zero-width). Until enough pairs exist the
comparison falls back to an unpaired (Welch-style) difference of per-path sequences.

Verdict, with alpha split by Bonferroni in two halves fixed at the start (mean return difference and
success-rate difference, whether or not a success signal ever appears):
- ``differ``: some metric's anytime interval excludes 0;
- ``equivalent``: every metric's interval lies inside its margin ±delta (an equivalence test against
  ±delta in the spirit of TOST, Schuirmann 1987, *not* "the interval contains 0"); the margin is
  fixed before it is used: given, 5% of the return bounds, or 5% of the return range over a stated
  burn-in, frozen then;
- ``undecided``: otherwise.
The intervals are the running intersections of each sequence, and the first ``differ`` or ``equivalent``
stands until the data contradict it (probability <= alpha), which `contradicted` says (`sticky`).
With ``deterministic=True`` (explore off on both paths) equal seeds must give equal episodes: one
differing paired seed (return, success or validity) is a conclusive ``differ`` (``exact``); all seeds
identical is ``equivalent`` only once an anytime upper bound on the share of seeds that could still
differ is at most `could_differ_max` (Robbins' beta mixture, `guards.anytime_share_upper`).

References: Waudby-Smith et al. (2021), arXiv:2103.06476 (asymptotic CS, also for paired
differences); Waudby-Smith & Ramdas (2023), arXiv:2010.09686 (hedged betting); Robbins (1970) beta mixture
(rates); Howard et al. (2021) (normal mixture, bounded); B. L. Welch (1947) (unpaired difference);
D. J. Schuirmann (1987), J. Pharmacokinet. Biopharm. 15(6) (two one-sided tests).
"""

from __future__ import annotations

import math

from tui_eval.records import EpisodeRecord

from .comparison_summary import ComparisonSummary, FirstDifference, Interval, ReturnDifference, SeedResult
from .exact_proof import PROVEN, REFUTED, ExactProof
from .guards import anytime_share_upper, guarded_asymptotic_cs_from_moments, returns_identical
from .intervals import t_interval_from_moments, welch_interval_from_moments
from .path import BETA_MIXTURE_CS, PathStats, ReturnBounds
from .sequences import beta_mixture_cs_scalar, normal_mixture_cs_from_mean
from .sticky import StickyVerdict

__all__ = ["Comparison", "difference_interval", "verdict"]

MARGIN_SHARE = 0.05  # default margin: this share of the return bounds' width (or burn-in range)


def difference_interval(iv_a, iv_b) -> tuple[float, float] | None:
    """Interval for mu_a - mu_b from intervals for mu_a and mu_b: ``[lo_a - hi_b, hi_a - lo_b]``.

    If each holds (uniformly over time) with probability >= 1 - alpha/2, the difference holds with
    probability >= 1 - alpha (union bound, Bonferroni). None if either is None.
    """
    if iv_a is None or iv_b is None:
        return None
    return (iv_a[0] - iv_b[1], iv_a[1] - iv_b[0])


def verdict(intervals: list[tuple[float, float] | None], margins: list[float | None]) -> str:
    """``differ`` if any interval excludes 0; ``equivalent`` if all lie strictly inside their ±margin
    (a None margin never allows it); else ``undecided`` (also when an interval is missing). Each
    interval should already be at its Bonferroni share of alpha."""
    present = [iv for iv in intervals if iv is not None]
    if any(lo > 0.0 or hi < 0.0 for lo, hi in present):
        return "differ"
    if present and len(present) == len(intervals) and all(
        m is not None and -m < lo and hi < m for (lo, hi), m in zip(present, margins)
    ):
        return "equivalent"
    return "undecided"


def same_result(ra, va, sa, rb, vb, sb) -> bool:
    """One seed's two results agree: same validity, identical returns (float32), same success."""
    if va != vb:
        return False
    if va and not returns_identical(ra, rb):
        return False
    return sa is None or sb is None or sa == sb


class _Side:
    """Per-path counts and Welford moments of valid returns (inlined in `Comparison.add` for speed)."""

    __slots__ = ("n", "mean", "m2", "lo", "hi", "episodes", "successes", "has_success")

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.lo = math.inf
        self.hi = -math.inf
        self.episodes = 0
        self.successes = 0
        self.has_success = False

    @property
    def var(self) -> float:
        return self.m2 / (self.n - 1) if self.n > 1 else math.nan


def _check_arguments(a: str, b: str, alpha: float, margin: float | None) -> None:
    if a == b:
        raise ValueError(f"compare two different paths, got {a!r} twice")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if margin is not None and not margin > 0.0:
        raise ValueError(f"margin must be > 0, got {margin}")


class Comparison:
    """Compare paths `a` and `b` from their episode records (records of other paths are ignored).

    Parameters
    ----------
    margin: equivalence margin delta in return units. Default: 5% of the width of `return_bounds`
        when given, else 5% of the range of valid returns of both paths at the moment each path has
        `margin_burn_in` valid returns, frozen then (never recomputed); a zero range gives no margin
        (no "equivalent" without `margin`). `summary().margin_source` says which.
    deterministic: both paths ran with explore off, so equal seeds must give equal episodes.
    alpha: family-wise error of the verdict, split by Bonferroni in two fixed halves.
    return_bounds: (lo, hi[, source]) of every return: the paired difference gets a bounded CS.
    success_margin: equivalence margin for the success-rate difference (absolute, default 0.05).
    could_differ_max: deterministic mode: "equivalent" once the anytime upper bound on the share of
        seeds that could differ is at most this (0.05: 116 identical seeds at alpha 0.05).
    target_n, burn_in: as in `PathStats`.
    """

    def __init__(
        self,
        a: str,
        b: str,
        margin: float | None = None,
        deterministic: bool = False,
        alpha: float = 0.05,
        *,
        return_bounds: ReturnBounds | None = None,
        success_margin: float = 0.05,
        could_differ_max: float = 0.05,
        margin_burn_in: int = 30,
        target_n: int = 100,
        burn_in: int = 30,
        proof: ExactProof | None = None,
        policies_deterministic: bool | None = None,
        margin_from_floor: bool = False,
    ) -> None:
        _check_arguments(a, b, alpha, margin)
        self.a, self.b = a, b
        self.deterministic = bool(deterministic)
        # explore off on both paths, whether or not the env repeats itself: their actions on the same observations
        # can be compared (the check of a differing seed, tui_eval/engine/proof.py)
        self.policies_deterministic = self.deterministic if policies_deterministic is None else \
            bool(policies_deterministic)
        self.margin_from_floor = bool(margin_from_floor) and margin is None  # --equivalence-margin floor
        self.proof = proof  # shared by the run's comparisons; None: a differing seed decides alone
        self.alpha = float(alpha)
        self.alpha_each = self.alpha / 2.0  # fixed at the start: returns and success, always two
        self.success_margin = float(success_margin)
        self.could_differ_max = float(could_differ_max)
        self.margin_burn_in = max(1, int(margin_burn_in))
        self.target_n = int(target_n)
        self.burn_in = max(2, int(burn_in))
        self.return_bounds = None if return_bounds is None else (float(return_bounds[0]), float(return_bounds[1]))
        self.margin, self.margin_source = self._fixed_margin(margin, return_bounds, self.margin_from_floor)
        self._margin_open = self.margin is None and not self.margin_from_floor  # frozen once, after the burn-in
        span = None if self.return_bounds is None else self.return_bounds[1] - self.return_bounds[0]
        d_bounds = None if span is None else (-span, span, "difference of returns in the bounds")
        self._diff = PathStats(d_bounds, self.alpha_each, target_n=self.target_n, burn_in=self.burn_in)
        self._sides = (_Side(), _Side())
        # unmatched records per side: seed (block 0) or (block, seed) -> (ret, valid, success)
        self._pending: tuple[dict, dict] = ({}, {})
        # path -> (index, its side, its unmatched, the other's unmatched): one lookup per add
        self._route = {
            a: (0, self._sides[0], self._pending[0], self._pending[1]),
            b: (1, self._sides[1], self._pending[1], self._pending[0]),
        }
        # paired seeds, to recognise duplicates: their results when deterministic (a repeated seed must
        # repeat its result), else only the keys (a set: about 60 bytes a pair at a million pairs)
        self._done: dict | set = {} if self.deterministic else set()
        self.matched = 0  # pairs formed, valid or not
        self.identical_pairs = 0
        self.differing = 0  # paired seeds (or duplicate records) whose results differ
        self.duplicates = 0  # second records for a (block, seed) on one side: kept apart, counted
        self._first_diff: FirstDifference | None = None
        self._lo = math.inf
        self._hi = -math.inf
        self._sticky = StickyVerdict()  # running intersections and the decision, kept across summaries

    def _fixed_margin(self, margin, bounds, from_floor: bool = False) -> tuple[float | None, str]:
        if from_floor:
            return None, "the noise floor, once measured (--equivalence-margin floor)"
        if margin is not None:
            return float(margin), "given"
        if bounds is not None:
            lo, hi = float(bounds[0]), float(bounds[1])
            return MARGIN_SHARE * (hi - lo), f"5% of the return bounds [{lo:g}, {hi:g}]"
        return None, f"5% of the return range once both paths have {self.margin_burn_in} valid returns"

    # ------------------------------------------------------------------ hot path
    def add(self, record: EpisodeRecord) -> None:
        """Account one episode of path a or b: O(1) amortised."""
        route = self._route.get(record.path)
        if route is None:
            return
        i, side, mine, theirs = route
        side.episodes += 1
        s = record.success
        if s is not None:
            side.has_success = True
            if s:  # EpisodeRecord makes an invalid episode's success False
                side.successes += 1
        x = record.ret
        valid = not record.invalid and x - x == 0.0  # x - x != 0 for inf and nan
        if valid:
            x = float(x)
            n = side.n + 1
            side.n = n
            delta = x - side.mean
            mean = side.mean + delta / n
            side.mean = mean
            side.m2 += delta * (x - mean)
            if x < side.lo:
                side.lo = x
            if x > side.hi:
                side.hi = x
            if x < self._lo:
                self._lo = x
            if x > self._hi:
                self._hi = x
            if self._margin_open and side.n == self.margin_burn_in:
                self._freeze_margin()
        key = record.seed if record.block == 0 else (record.block, record.seed)  # a plain int: less memory
        result = (x, valid, s)
        if key in mine or key in self._done:
            self._duplicate(i, key, result)
            return
        other = theirs.pop(key, None)
        if other is None:
            mine[key] = result
            return
        if i == 0:
            self._pair(key, result, other)
        else:
            self._pair(key, other, result)

    def _freeze_margin(self) -> None:
        """Both paths reached the margin burn-in: fix the margin from the range seen, once."""
        if self._sides[0].n < self.margin_burn_in or self._sides[1].n < self.margin_burn_in:
            return
        span = self._hi - self._lo
        if span > 0.0:
            self.margin = MARGIN_SHARE * span
            self.margin_source = (f"5% of the return range [{self._lo:g}, {self._hi:g}] of both paths once "
                                  f"each had {self.margin_burn_in} valid returns, frozen")
        else:
            self.margin = None
            self.margin_source = (f"none: all returns were identical when both paths had {self.margin_burn_in} "
                                  "valid returns (give --equivalence-margin or --return-bounds)")
        self._margin_open = False  # frozen: never recomputed

    def _margin_of_floor(self) -> None:
        """`--equivalence-margin floor`: the margin is the noise floor's spread (the standard deviation of the first
        path's own per-seed return differences, replayed alone), fixed once when the floor is measured: "the paths
        are equivalent" then means "the mean return moves less between them than one path's own noise"."""
        floor = None if self.proof is None else self.proof.floor
        if not self.margin_from_floor or floor is None or self.margin is not None:
            return
        self.margin_from_floor = False
        if floor.diff_spread > 0.0:
            self.margin = float(floor.diff_spread)
            self.margin_source = (f"the noise floor: the spread of {floor.path}'s own return differences over "
                                  f"{floor.seeds} seeds replayed alone, fixed then")
        else:
            self.margin_source = (f"none: the noise floor is 0 ({floor.path} repeated its episode on {floor.seeds} "
                                  "seeds replayed alone); give --equivalence-margin D")

    def _pair(self, key, ra, rb) -> None:
        """Both results of one seed: the paired difference, identical / differing counts."""
        self.matched += 1
        if isinstance(self._done, dict):
            self._done[key] = (ra, rb)
        else:
            self._done.add(key)
        xa, va, sa = ra
        xb, vb, sb = rb
        if va and vb:
            self._diff.add_value(xa - xb)
        if same_result(xa, va, sa, xb, vb, sb):
            self.identical_pairs += 1
        else:
            self._mark_differing(key, ra, rb)

    def _duplicate(self, i: int, key, result) -> None:
        """A second record for a (block, seed) on one side: the first is kept; a different result is
        a differing seed (a deterministic path must repeat itself)."""
        self.duplicates += 1
        if key in self._done:
            if not isinstance(self._done, dict):
                return  # statistical mode: the first pair stands, the duplicate is only counted
            first = self._done[key][i]
        else:
            first = self._pending[i][key]
        if not same_result(*first, *result):
            pair = (first, result) if i == 0 else (result, first)
            self._mark_differing(key, *pair)

    def _mark_differing(self, key, ra, rb) -> None:
        self.differing += 1
        if self._first_diff is None:
            block, seed = (0, key) if isinstance(key, int) else key
            self._first_diff = FirstDifference(block, seed, SeedResult(*ra), SeedResult(*rb))

    # ------------------------------------------------------------------ summary
    @property
    def first_difference(self) -> FirstDifference | None:
        return self._first_diff

    @property
    def paired(self) -> int:
        """Paired seeds with both episodes valid (the differences in the paired statistics)."""
        return self._diff.n

    def _side_bounded(self, side: _Side) -> bool:
        """The side's sequence is the bounded one (`_side_cs`): bounds given and its returns within them."""
        return self.return_bounds is not None and self.return_bounds[0] <= side.lo and side.hi <= self.return_bounds[1]

    def _side_cs(self, side: _Side, alpha: float):
        if self.return_bounds is not None and self.return_bounds[0] <= side.lo and side.hi <= self.return_bounds[1]:
            lo, hi = self.return_bounds
            return normal_mixture_cs_from_mean(side.n, side.mean, lo, hi, alpha, self.target_n)
        return guarded_asymptotic_cs_from_moments(side.n, side.mean, side.m2, side.lo, side.hi, alpha,
                                                  self.target_n, self.burn_in)

    def return_difference(self) -> ReturnDifference:
        """The mean-return difference: paired when enough pairs, else unpaired (Welch-style)."""
        ma, mb = self._sides
        diff = self._diff
        npair = diff.n
        a_each = self.alpha_each
        paired_cs, paired_method = diff.cs()
        bounded = diff.return_bounds is not None and diff.return_bounds_ok
        sides_ready = ma.n >= self.burn_in and mb.n >= self.burn_in
        if diff.mean is not None and (npair >= self.burn_in or (bounded and npair >= 1)
                                      or (npair >= 2 and not sides_ready)):
            ci = t_interval_from_moments(npair, diff.mean, diff.var, self.alpha)
            return ReturnDifference("paired", diff.mean, ci, paired_cs, paired_method)
        if ma.n >= 2 and mb.n >= 2:
            return ReturnDifference(
                "welch", ma.mean - mb.mean,
                welch_interval_from_moments(ma.n, ma.mean, ma.var, mb.n, mb.mean, mb.var, self.alpha),
                difference_interval(self._side_cs(ma, a_each / 2.0), self._side_cs(mb, a_each / 2.0)),
                "difference of per-path sequences at alpha/4 each")
        if npair >= 1:
            return ReturnDifference(mean=diff.mean)
        if ma.n and mb.n:
            return ReturnDifference(mean=ma.mean - mb.mean)
        return ReturnDifference()

    def success_difference(self) -> tuple[float | None, Interval | None]:
        """Success-rate difference (unpaired: per-path beta-mixture CSs at alpha_each/2 each)."""
        ma, mb = self._sides
        if not (ma.has_success and mb.has_success and ma.episodes and mb.episodes):
            return None, None
        half = self.alpha_each / 2.0
        return ma.successes / ma.episodes - mb.successes / mb.episodes, difference_interval(
            beta_mixture_cs_scalar(ma.successes, ma.episodes, half),
            beta_mixture_cs_scalar(mb.successes, mb.episodes, half),
        )

    def could_differ_upper(self) -> float | None:
        """Anytime 1-alpha upper bound on the share of seeds whose results differ (None before a pair)."""
        n = self.identical_pairs + self.differing
        return anytime_share_upper(self.differing, n, self.alpha) if n else None

    def exact_verdict(self) -> str:
        """Deterministic mode: one differing seed is conclusive; identical seeds need a small bound."""
        if self._first_diff is not None:
            return "differ"
        upper = self.could_differ_upper()
        if upper is not None and upper <= self.could_differ_max:
            return "equivalent"
        return "undecided"

    def _kept(self, r: ReturnDifference, success_cs: Interval | None) -> tuple[ReturnDifference, Interval | None]:
        """The return difference with its running-intersection interval, and the success one's: what decides."""
        n, sticky = self._diff.n, self._sticky
        if r.method == "paired":
            sequence = "paired, " + ("bounded" if self._diff.return_bounds_ok else "asymptotic")
        else:  # each side's sequence is bounded while its returns stay in the bounds (`_side_cs`)
            sequence = "welch, " + "/".join("bounded" if self._side_bounded(s) else "asymptotic" for s in self._sides)
        kept = sticky.keep("returns", sequence, r.cs, n)
        success = sticky.keep("success", BETA_MIXTURE_CS, success_cs, n) if success_cs is not None else None
        return ReturnDifference(r.method, r.mean, r.ci, kept, r.cs_method), success

    def summary(self) -> ComparisonSummary:
        """The comparison now, frozen (see the module docstring for the verdict; `format` words it)."""
        r = self.return_difference()
        success_diff, success_cs = self.success_difference()
        success_metric = success_cs is not None
        proof = self.proof
        self._margin_of_floor()
        exact = self.deterministic and not (proof is not None and proof.refuted)
        exact_reason = proof.line if proof is not None and proof.line else None
        checked = proof is not None and self.policies_deterministic and proof.state in (PROVEN, REFUTED)
        agreement = proof.agreement if checked and proof is not None else None
        if exact:
            result = self.exact_verdict()
            if result == "differ" and proof is not None and proof.state != PROVEN:
                result = "undecided"  # a differing seed decides only once replayed on each path alone
        else:  # the running intersections decide: the per-look intervals are not nested (sticky.py)
            r, success_cs = self._kept(r, success_cs)
            intervals = [r.cs] + ([success_cs] if success_metric else [])
            margins = [self.margin] + ([self.success_margin] if success_metric else [])
            result = verdict(intervals, margins)
        result = self._sticky.settle(result, exact, self._diff.n, {} if exact else
                                     {"returns": r.cs, "success": success_cs})
        decision = self._sticky.decision
        cs_method = r.cs_method or self._diff.cs()[1]
        return ComparisonSummary(
            a=self.a, b=self.b, verdict=result, exact=exact, paired=self._diff.n,
            diff_mean=r.mean, diff_cs95=r.cs, diff_ci95=r.ci, method=r.method,
            cs_method=cs_method + (f"; success: {BETA_MIXTURE_CS}" if success_metric else ""),
            margin=self.margin, margin_source=self.margin_source, alpha=self.alpha, alpha_each=self.alpha_each,
            identical_pairs=self.identical_pairs, differing=self.differing,
            could_differ_upper=self.could_differ_upper(),
            could_differ_max=self.could_differ_max if exact else None,
            duplicates=self.duplicates, matched=self.matched,
            unmatched_a=len(self._pending[0]), unmatched_b=len(self._pending[1]),
            valid_a=self._sides[0].n, valid_b=self._sides[1].n,
            success_diff=success_diff, success_diff_cs95=success_cs,
            success_margin=self.success_margin if success_metric else None,
            first_difference=self._first_diff, proof=None if proof is None else proof.state,
            exact_reason=exact_reason,
            decided_at=None if decision is None else decision.at,
            decided_cs95=None if decision is None else decision.intervals.get("returns"),
            contradicted=self._sticky.contradicted,
            same_policy=None if agreement is None else agreement.within,
            agreement=None if agreement is None else agreement.to_json(),
            noise_floor=None if not checked or proof is None or proof.floor is None else proof.floor.to_json(),
        )
