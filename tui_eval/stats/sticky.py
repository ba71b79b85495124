"""A decided verdict stands: the running intersection of each anytime interval, and the decision kept.

A confidence sequence holds at every look at once on one event of probability >= 1 - alpha, so its
running intersection ``[max_s lo_s, min_s hi_s]`` holds on the same event (Darling & Robbins 1967; Howard
et al. 2021, Sec. 2). The per-look intervals of `Comparison` are not nested: the asymptotic CS widens when
its variance estimate or the side of its tail guard changes, and the unpaired (Welch-style) sequence is
replaced by the paired one once enough pairs exist, a different sequence whose interval need not lie in
the earlier one. Verdicts read off the latest interval alone flipped on long synthetic runs (equivalent ->
undecided at the next pair, differ -> undecided when the paired sequence took over, equivalent -> differ
once a small real difference was resolved: tests/unit/test_verdict_sticks.py). So:

- each metric's interval is the running intersection of its sequence since that sequence began (a new
  sequence, after the switch from Welch to paired or after return bounds were found wrong, starts anew);
- the first ``differ`` or ``equivalent`` is recorded with the paired count and the intervals that decided
  it, and stands: a later verdict read off the intervals does not replace it;
- it is withdrawn only when the data contradict it: a running intersection becomes empty, or the interval
  of a sequence that began after the decision no longer meets the interval that decided it. Either means a
  sequence missed (probability <= alpha, the union bound over the sequences involved); the verdict is
  then ``undecided`` for good and `contradicted` says why. Exact mode (both paths deterministic) keeps its
  own rules; a seed found differing after an exact ``equivalent`` turns it into ``differ`` (one differing seed
  is conclusive) and `contradicted` says so, and an exact decision whose replay showed the env does not
  repeat itself gives way to the statistical verdict, said likewise.

References: D. A. Darling, H. Robbins (1967), PNAS 58; S. R. Howard, A. Ramdas, J. McAuliffe, J. Sekhon
(2021), Ann. Statist. 49(2), Sec. 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .comparison_summary import Interval

__all__ = ["Decision", "StickyVerdict"]

UNDECIDED = "undecided"


def _fmt(iv: Interval) -> str:
    return f"[{iv[0]:.6g}, {iv[1]:.6g}]"


@dataclass(frozen=True, slots=True)
class Decision:
    """The first decided verdict: at how many paired seeds, on which intervals (metric -> interval)."""

    verdict: str
    at: int
    intervals: dict[str, Interval] = field(default_factory=dict)
    exact: bool = False


class StickyVerdict:
    """Running intersections per metric and the decision of one comparison (updated at each summary)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[str, Interval]] = {}  # metric -> (its sequence, running intersection)
        self.decision: Decision | None = None
        self.contradicted: str | None = None  # why a decision was withdrawn or replaced, in words
        self._blocked = False  # the statistical intervals contradicted themselves: undecided for good

    def keep(self, metric: str, sequence: str, iv: Interval | None, n: int) -> Interval | None:
        """The running intersection of `metric`'s intervals from `sequence` (restarted when the sequence
        changes); after a contradiction the current interval as it is (no event left to intersect on)."""
        old = self._kept.get(metric)
        if iv is None:
            return old[1] if old is not None and old[0] == sequence and not self._blocked else None
        if self._blocked:
            return iv
        if old is not None and old[0] == sequence:
            lo, hi = max(old[1][0], iv[0]), min(old[1][1], iv[1])
            if lo > hi:
                self._block(f"the running intersection of the {metric} intervals ({sequence}) {_fmt(old[1])} no "
                            f"longer meets the interval {_fmt(iv)} at {n} paired seeds")
                return iv
            iv = (lo, hi)
        self._kept[metric] = (sequence, iv)
        decided = None if self.decision is None else self.decision.intervals.get(metric)
        if decided is not None and (iv[0] > decided[1] or iv[1] < decided[0]):
            # only a sequence begun after the decision can get here: the same one stays inside it
            self._block(f"the {metric} interval ({sequence}) {_fmt(iv)} at {n} paired seeds no longer meets "
                        f"the interval {_fmt(decided)} that decided it")
            return iv
        return iv

    def _block(self, what: str) -> None:
        d = self.decision
        before = "no verdict" if d is None else f"{d.verdict} (decided at {d.at} paired seeds) withdrawn"
        self.contradicted = f"{before}: {what}, so a sequence missed (probability <= alpha); undecided from then on"
        self._blocked = True

    def settle(self, raw: str, exact: bool, n: int, intervals: dict[str, Interval | None]) -> str:
        """The verdict to show, given `raw` read off the current (kept) intervals at `n` paired seeds."""
        d = self.decision
        if d is not None and d.exact and not exact:
            self.contradicted = (f"{d.verdict} (exact, decided at {d.at} paired seeds) withdrawn: a replay showed "
                                 "the env does not repeat itself from its seed, so the verdict is statistical")
            self.decision = d = None
        if self._blocked and not exact:
            return UNDECIDED
        if d is None:
            if raw != UNDECIDED:
                kept = {k: iv for k, iv in intervals.items() if iv is not None}
                self.decision = Decision(raw, n, kept, exact)
            return raw
        if exact and d.verdict == "equivalent" and raw == "differ":
            # one differing seed is conclusive with both paths deterministic: it replaces the share bound
            self.contradicted = (f"equivalent (exact, decided at {d.at} paired seeds: few seeds could differ) "
                                 f"replaced at {n} paired seeds: a seed differs on the two paths")
            self.decision = Decision("differ", n, {}, True)
            return "differ"
        return d.verdict
