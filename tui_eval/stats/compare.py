"""A vs B: do two inference paths of one checkpoint give different episodes?

Paired by seed: when both paths finished the same seed of the same block, the per-seed difference
d = ret_a - ret_b removes the seed's own difficulty from the comparison (a paired design; the
variance of d is usually far below var_a + var_b). Differences feed a running (Welford) accumulator
and an anytime-valid confidence sequence for E[d]; until enough pairs exist the comparison falls back
to an unpaired (Welch-style) difference of the two per-path confidence sequences.

Verdict, with alpha split by Bonferroni across the metrics that feed it (mean return difference and,
when both paths report success, success-rate difference):
- ``differ``: some metric's anytime interval excludes 0;
- ``equivalent``: every metric's interval lies inside its margin ±delta (an equivalence test against
  ±delta in the spirit of TOST, Schuirmann 1987, *not* "the interval contains 0");
- ``undecided``: otherwise.
With ``deterministic=True`` (explore off on both paths) equal seeds must give equal episodes, so one
differing paired seed is conclusive (``exact``) and no statistics are needed.

References: Waudby-Smith et al. (2021), arXiv:2103.06476 (asymptotic CS, also for paired
differences); Robbins (1970) beta mixture (rates); B. L. Welch (1947) (unpaired difference);
D. J. Schuirmann (1987), *A comparison of the two one-sided tests procedure and the power approach
for assessing the equivalence of average bioavailability*, J. Pharmacokinet. Biopharm. 15(6).
"""

from __future__ import annotations

import math
from typing import Any

from tui_eval.spec import EpisodeRecord

from .intervals import t_interval_from_moments, welch_interval_from_moments
from .path import ASYMPTOTIC_CS, BETA_MIXTURE_CS, _pair
from .running import RunningMoments
from .sequences import asymptotic_cs_from_moments, beta_mixture_cs_scalar

__all__ = ["Comparison", "difference_interval", "verdict"]


def difference_interval(iv_a, iv_b) -> tuple[float, float] | None:
    """Interval for mu_a - mu_b from intervals for mu_a and mu_b: ``[lo_a - hi_b, hi_a - lo_b]``.

    If each holds (uniformly over time) with probability >= 1 - alpha/2, the difference holds with
    probability >= 1 - alpha (union bound, Bonferroni). None if either is None.
    """
    if iv_a is None or iv_b is None:
        return None
    return (iv_a[0] - iv_b[1], iv_a[1] - iv_b[0])


def verdict(intervals: list[tuple[float, float] | None], margins: list[float]) -> str:
    """``differ`` if any interval excludes 0; ``equivalent`` if all lie strictly inside their ±margin;
    else ``undecided`` (also when an interval is missing). Each interval should already be at its
    Bonferroni share of alpha."""
    present = [iv for iv in intervals if iv is not None]
    if any(lo > 0.0 or hi < 0.0 for lo, hi in present):
        return "differ"
    if present and len(present) == len(intervals) and all(
        -m < lo and hi < m for (lo, hi), m in zip(present, margins)
    ):
        return "equivalent"
    return "undecided"


def _num(x: float) -> str:
    """A return as a short number: 6 significant digits, floats shown as floats (21.0, 0.125)."""
    return repr(float(f"{x:.6g}"))


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def _fmt_iv(iv) -> str:
    return "none yet" if iv is None else f"[{iv[0]:.4g}, {iv[1]:.4g}]"


class _Side:
    """Per-path counts and Welford moments of valid returns (inlined in `Comparison.add` for speed)."""

    __slots__ = ("n", "mean", "m2", "episodes", "successes", "has_success")

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.episodes = 0
        self.successes = 0
        self.has_success = False

    @property
    def var(self) -> float:
        return self.m2 / (self.n - 1) if self.n > 1 else math.nan


class Comparison:
    """Compare paths `a` and `b` from their episode records (records of other paths are ignored).

    Parameters
    ----------
    margin: equivalence margin delta in return units; default 5% of the observed return scale
        (0.05 * (max - min) of valid returns over both paths so far, at least 1e-9). A data-dependent
        margin is a convenience, not a pre-registered one: pass `margin` for a strict equivalence claim.
    deterministic: both paths ran with explore off, so equal seeds must give equal episodes.
    alpha: family-wise error of the verdict, split by Bonferroni across its metrics.
    success_margin: equivalence margin for the success-rate difference (absolute, default 0.05).
    min_identical_pairs: deterministic mode: identical paired seeds needed for an exact "equivalent".
    target_n, burn_in: as in `PathStats` (the asymptotic CS is tuned for `target_n` and reported from
        `burn_in` observations on).
    """

    def __init__(
        self,
        a: str,
        b: str,
        margin: float | None = None,
        deterministic: bool = False,
        alpha: float = 0.05,
        *,
        success_margin: float = 0.05,
        min_identical_pairs: int = 1,
        target_n: int = 100,
        burn_in: int = 30,
    ) -> None:
        if a == b:
            raise ValueError(f"compare two different paths, got {a!r} twice")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if margin is not None and not margin > 0.0:
            raise ValueError(f"margin must be > 0, got {margin}")
        self.a, self.b = a, b
        self.margin = None if margin is None else float(margin)
        self.deterministic = bool(deterministic)
        self.alpha = float(alpha)
        self.success_margin = float(success_margin)
        self.min_identical_pairs = max(1, int(min_identical_pairs))
        self.target_n = int(target_n)
        self.burn_in = max(2, int(burn_in))
        self._sides = (_Side(), _Side())
        # unmatched records per side: (block, seed) -> (ret, valid, success)
        self._pending: tuple[dict, dict] = ({}, {})
        # path -> (index, its side, its unmatched, the other's unmatched): one lookup per add
        self._route = {
            a: (0, self._sides[0], self._pending[0], self._pending[1]),
            b: (1, self._sides[1], self._pending[1], self._pending[0]),
        }
        self._diff = RunningMoments()  # d = ret_a - ret_b over pairs with both valid (min/max unused)
        self.matched = 0  # pairs formed, valid or not
        self.identical_pairs = 0
        self._first_diff: tuple | None = None  # (block, seed, ret_a, ret_b, succ_a, succ_b)
        self._lo = math.inf
        self._hi = -math.inf

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
            if x < self._lo:
                self._lo = x
            if x > self._hi:
                self._hi = x
        key = (record.block, record.seed)
        other = theirs.pop(key, None)
        if other is None:
            mine[key] = (x, valid, s)
            return
        self.matched += 1
        ox, ovalid, os_ = other
        if not (valid and ovalid):
            return
        d = x - ox if i == 0 else ox - x  # ret_a - ret_b
        acc = self._diff
        n = acc.n + 1
        acc.n = n
        delta = d - acc.mean
        mean = acc.mean + delta / n
        acc.mean = mean
        acc.m2 += delta * (d - mean)
        # identical: |d| <= 1e-6 (1 + max(|ret_a|, |ret_b|)) and no success disagreement
        if d == 0.0:
            same = True
        else:
            ad = d if d > 0.0 else -d
            ax = x if x > 0.0 else -x
            ao = ox if ox > 0.0 else -ox
            same = ad <= 1e-6 * (1.0 + (ax if ax > ao else ao))
        if same and (s is None or os_ is None or s == os_):
            self.identical_pairs += 1
        elif self._first_diff is None:
            ra, rb, sa, sb = (x, ox, s, os_) if i == 0 else (ox, x, os_, s)
            self._first_diff = (record.block, record.seed, ra, rb, sa, sb)

    # ------------------------------------------------------------------ summary
    @property
    def paired(self) -> int:
        """Paired seeds with both episodes valid (the differences in the paired statistics)."""
        return self._diff.n

    def _margin(self) -> float | None:
        if self.margin is not None:
            return self.margin
        if self._hi < self._lo:
            return None
        return max(0.05 * (self._hi - self._lo), 1e-9)

    def _seed_text(self, block: int, seed: int) -> str:
        return f"seed {seed}" if block == 0 else f"seed {seed} (block {block})"

    def summary(self) -> dict[str, Any]:
        """The comparison as a JSON-serialisable dict (see the module docstring for the verdict)."""
        ma, mb = self._sides  # per-path counts and moments
        diff = self._diff
        npair = diff.n
        success_metric = ma.has_success and mb.has_success
        n_metrics = 2 if success_metric else 1
        a_each = self.alpha / n_metrics
        delta = self._margin()

        # --- mean return difference
        method: str | None = None
        diff_mean = ci = cs = None
        both_sides = ma.n >= 2 and mb.n >= 2
        sides_ready = ma.n >= self.burn_in and mb.n >= self.burn_in
        if npair >= self.burn_in or (npair >= 2 and not sides_ready):
            method = "paired"
            diff_mean = diff.mean
            ci = t_interval_from_moments(npair, diff.mean, diff.var, self.alpha)
            if npair >= self.burn_in:
                cs = asymptotic_cs_from_moments(npair, diff.mean, diff.var, a_each, self.target_n)
        elif both_sides:
            method = "welch"
            diff_mean = ma.mean - mb.mean
            ci = welch_interval_from_moments(ma.n, ma.mean, ma.var, mb.n, mb.mean, mb.var, self.alpha)
            if sides_ready:
                cs = difference_interval(
                    asymptotic_cs_from_moments(ma.n, ma.mean, ma.var, a_each / 2.0, self.target_n),
                    asymptotic_cs_from_moments(mb.n, mb.mean, mb.var, a_each / 2.0, self.target_n),
                )
        elif npair >= 1:
            diff_mean = diff.mean
        elif ma.n and mb.n:
            diff_mean = ma.mean - mb.mean

        # --- success-rate difference (unpaired: per-path beta-mixture CSs at a_each/2 each)
        success_diff = success_cs = None
        if success_metric and ma.episodes and mb.episodes:
            success_diff = ma.successes / ma.episodes - mb.successes / mb.episodes
            success_cs = difference_interval(
                beta_mixture_cs_scalar(ma.successes, ma.episodes, a_each / 2.0),
                beta_mixture_cs_scalar(mb.successes, mb.episodes, a_each / 2.0),
            )

        # --- verdict
        exact = False
        a, b = self.a, self.b
        if self.deterministic and self._first_diff is not None:
            block, seed, ra, rb, xa, xb = self._first_diff
            exact, result = True, "differ"
            if abs(ra - rb) > 1e-6 * (1.0 + max(abs(ra), abs(rb))):
                what = f"{a} {_num(ra)} vs {b} {_num(rb)}"
            else:
                what = f"{a} success={xa} vs {b} success={xb} (return {_num(ra)})"
            reason = f"{self._seed_text(block, seed)}: {what} with both deterministic"
        elif self.deterministic and self.identical_pairs >= self.min_identical_pairs:
            exact, result = True, "equivalent"
            reason = (
                f"{self.identical_pairs} paired seed(s): {a} and {b} gave identical returns "
                f"with both deterministic"
            )
        else:
            intervals = [cs] + ([success_cs] if success_metric else [])
            margins = [delta if delta is not None else 0.0] + ([self.success_margin] if success_metric else [])
            result = verdict(intervals, margins)
            level = f"{100 * (1 - a_each):.4g}%"
            unit = f"{npair} paired seeds" if method == "paired" else f"unpaired, {ma.n} vs {mb.n} valid episodes"
            if cs is not None:
                parts = [f"{a} - {b} = {_fmt(diff_mean)}, anytime {level} {_fmt_iv(cs)} ({unit})"]
            elif method is not None:
                start = f"{self.burn_in} {'pairs' if method == 'paired' else 'valid episodes per path'}"
                parts = [f"{a} - {b} = {_fmt(diff_mean)} ({unit}), anytime interval from {start}"]
            else:
                parts = [f"waiting for returns: {a} {ma.n} valid, {b} {mb.n} valid, {npair} paired"]
            if success_cs is not None:
                parts.append(f"success {a} - {b} = {_fmt(success_diff)}, anytime {level} {_fmt_iv(success_cs)}")
            if result == "differ":
                which = [name for name, iv in (("returns", cs), ("success", success_cs))
                         if iv is not None and (iv[0] > 0.0 or iv[1] < 0.0)]
                why = f"{' and '.join(which)} interval excludes 0"
            elif result == "equivalent":
                why = f"inside ±{_fmt(delta)}" + (f", success inside ±{self.success_margin:g}" if success_metric else "")
            elif all(iv is not None for iv in intervals):
                why = f"includes 0, not inside ±{_fmt(delta)}" + (
                    f" / ±{self.success_margin:g}" if success_metric else "")
            else:
                why = "not enough data yet"
            reason = "; ".join(parts) + f": {result}, {why}"

        return {
            "a": a,
            "b": b,
            "paired": npair,
            "diff_mean": diff_mean,
            "diff_cs95": _pair(cs),
            "diff_ci95": _pair(ci),
            "method": method,
            "margin": delta,
            "verdict": result,
            "exact": exact,
            "identical_pairs": self.identical_pairs,
            "reason": reason,
            "success_diff": success_diff,
            "success_diff_cs95": _pair(success_cs),
            "success_margin": self.success_margin if success_metric else None,
            "alpha_each": a_each,
            "cs_method": ASYMPTOTIC_CS + (f"; success: {BETA_MIXTURE_CS}" if success_metric else ""),
            "matched": self.matched,
            "unmatched_a": len(self._pending[0]),
            "unmatched_b": len(self._pending[1]),
        }
