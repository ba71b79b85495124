"""A decided verdict does not flip: once `differ` or `equivalent`, every later summary says the same, or says
why not in `contradicted` (tui_eval/stats/sticky.py).

The streams below flipped before the running intersection and the kept decision: the per-look interval of
the asymptotic CS widens when its variance estimate or tail side changes (equivalent -> undecided at the next
pair), a small real difference once resolved turned `equivalent` into `differ`, and the paired sequence taking
over from the unpaired (Welch-style) one is a different sequence whose interval need not lie in the earlier
one (differ -> undecided). Each test also checks the cause is still there in the per-look interval.
"""

from __future__ import annotations

import numpy as np
import pytest

from tui_eval.records import EpisodeRecord
from tui_eval.stats import Comparison
from tui_eval.stats.compare import verdict
from tui_eval.stats.comparison_summary import ComparisonSummary
from tui_eval.stats.exact_proof import REFUTED, ExactProof
from tui_eval.views.format import comparison_reason


def paired_stream(kind: str, seed: int, n: int, drawn: int = 3000):
    """(a, b, return bounds) for the first n of `drawn` paired seeds sharing a seed difficulty (sd 30)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(100.0, 30.0, drawn)
    shift, noise, bounds = 0.0, lambda: rng.normal(0.0, 5.0, drawn), None
    if kind.startswith("small"):
        shift = 0.6
    if kind == "heavy":
        noise = lambda: rng.standard_t(2.5, drawn) * 3.0  # noqa: E731
    if kind == "lognormal":
        noise = lambda: rng.lognormal(0.0, 1.5, drawn)  # noqa: E731
    a, b = base + shift + noise(), base + noise()
    if kind.endswith("bounds"):
        a, b, bounds = np.clip(a, 0.0, 200.0), np.clip(b, 0.0, 200.0), (0.0, 200.0)
    return a[:n], b[:n], bounds


def feed(cmp: Comparison, records, every: int = 1):
    """Add the records, and yield (summary, the verdict of the per-look intervals alone) every `every`."""
    for k, record in enumerate(records):
        cmp.add(record)
        if k % every == every - 1:
            s = cmp.summary()
            r, (_, success) = cmp.return_difference(), cmp.success_difference()
            per_look = verdict([r.cs] + ([success] if success is not None else []),
                               [cmp.margin] + ([cmp.success_margin] if success is not None else []))
            yield s, per_look


def lockstep(a, b, success=None):
    for i in range(len(a)):
        ok = None if success is None else success[i]
        yield EpisodeRecord("A", i, float(a[i]), 10, success=None if ok is None else bool(ok[0]))
        yield EpisodeRecord("B", i, float(b[i]), 10, success=None if ok is None else bool(ok[1]))


def assert_sticks(history) -> tuple[str | None, int | None]:
    """After the first decided summary every later one gives the same verdict, or undecided with `contradicted`
    said; returns (the decided verdict, the paired count it was decided at)."""
    first = None
    for s, _ in history:
        if first is None and s.verdict != "undecided":
            first = s
            assert s.decided_at == s.paired and s.contradicted is None
        elif first is not None:
            if getattr(s, "contradicted", None):
                assert s.verdict == "undecided", s.contradicted
            else:
                assert (s.verdict, s.decided_at) == (first.verdict, first.paired), (first, s)
    return (None, None) if first is None else (first.verdict, first.paired)


def per_look_flips(history) -> bool:
    seen = [v for _, v in history]
    first = next((k for k, v in enumerate(seen) if v != "undecided"), None)
    return first is not None and any(v != seen[first] for v in seen[first:])


@pytest.mark.parametrize("kind, seed, n, decided", [
    ("zero", 6, 200, "equivalent"),  # per look: equivalent at 30 pairs, undecided at 31 (tail side changed)
    ("heavy", 9, 200, "equivalent"),  # equivalent at 46, undecided at 54 (an outlier widened it)
    ("lognormal", 3, 200, "equivalent"),  # equivalent at 49, undecided at 89: [-1.85, 4.71] -> [-25.3, 5.56]
    ("small", 0, 1000, "equivalent"),  # equivalent at 46, differ at 873 (true difference 0.6, margin 6.1)
])
def test_a_decided_verdict_stands_where_the_per_look_interval_flips(kind, seed, n, decided):
    a, b, bounds = paired_stream(kind, seed, n)
    history = list(feed(Comparison("A", "B", return_bounds=bounds), lockstep(a, b), every=2))
    assert per_look_flips(history)  # the cause: the per-look intervals are not nested
    assert assert_sticks(history)[0] == decided
    last = history[-1][0]
    lo, hi = last.diff_cs95
    assert last.decided_cs95[0] <= lo <= hi <= last.decided_cs95[1]  # the running intersection: nested


def test_bounded_small_difference_stays_equivalent():
    a, b, bounds = paired_stream("small-bounds", 0, 900)  # per look: equivalent at 60, differ at 876
    history = list(feed(Comparison("A", "B", return_bounds=bounds), lockstep(a, b), every=3))
    assert per_look_flips(history)
    assert assert_sticks(history) == ("equivalent", 60)


def lagging_pairs(seed: int, n: int, diff: float, drawn: int = 400):
    """Both paths lose 60% of episodes (invalid) independently: each path has 30 valid returns long before 30
    seeds are valid on both, so the unpaired (Welch-style) interval decides first and the paired one takes over."""
    rng = np.random.default_rng(seed)
    base = rng.normal(100.0, 3.0, drawn)
    a, b = base + diff + rng.normal(0.0, 2.0, drawn), base + rng.normal(0.0, 2.0, drawn)
    ia, ib = rng.random(drawn) < 0.6, rng.random(drawn) < 0.6
    for i in range(n):
        yield EpisodeRecord("A", i, float(a[i]), 10, invalid=bool(ia[i]))
        yield EpisodeRecord("B", i, float(b[i]), 10, invalid=bool(ib[i]))


@pytest.mark.parametrize("seed, diff", [(0, 4.0), (17, 4.0), (9, 2.5)])
def test_differ_stands_when_the_paired_sequence_takes_over(seed, diff):
    # per look, seed 0: differ by welch [0.49, 7.30] at 29 pairs, undecided by paired [-0.71, 6.07] at 30;
    # seed 9 (2.5): differ by paired [0.78, 5.79] at 30, undecided [-0.06, 4.82] at 31
    history = list(feed(Comparison("A", "B"), lagging_pairs(seed, 320, diff), every=2))
    assert per_look_flips(history)
    assert assert_sticks(history)[0] == "differ"
    assert {s.method for s, _ in history} >= ({"welch", "paired"} if diff == 4.0 else {"paired"})
    assert "excluded 0" in comparison_reason(history[-1][0]) or "excludes 0" in comparison_reason(history[-1][0])


def test_many_streams_never_flip():
    """Several settings and seeds, a summary every few records: no decided verdict ever changes."""
    for kind in ("zero", "small", "heavy", "lognormal"):
        for seed in (1, 2):
            a, b, bounds = paired_stream(kind, 100 + seed, 600)
            assert_sticks(feed(Comparison("A", "B", return_bounds=bounds), lockstep(a, b), every=3))
    rng = np.random.default_rng(5)  # success joins after a while: a metric joining late changes no decision
    a, b, _ = paired_stream("zero", 7, 400)
    success = [None] * 150 + [(bool(x), bool(y)) for x, y in rng.random((250, 2)) < 0.5]
    assert_sticks(feed(Comparison("A", "B"), lockstep(a, b, success), every=2))


def test_data_that_contradict_the_decision_say_so():
    """Returns that jump after a decision (not one stream of iid pairs any more) empty the running
    intersection: undecided from then on, and why."""
    rng = np.random.default_rng(3)
    d = np.concatenate([rng.normal(0.0, 1.0, 200), rng.normal(50.0, 1.0, 200)])
    history = list(feed(Comparison("A", "B", margin=5.0), lockstep(100.0 + d, np.full(400, 100.0))))
    assert assert_sticks(history)[0] == "equivalent"
    last = history[-1][0]
    assert last.verdict == "undecided" and "equivalent (decided at" in last.contradicted
    assert "probability <= alpha" in last.contradicted and last.contradicted in comparison_reason(last)
    again = ComparisonSummary.from_json(last.to_json())
    assert (again.contradicted, again.decided_at, again.decided_cs95) == (
        last.contradicted, last.decided_at, last.decided_cs95)


def test_exact_equivalent_then_a_differing_seed_is_differ_and_says_why():
    cmp = Comparison("A", "B", deterministic=True)
    for i in range(120):
        cmp.add(EpisodeRecord("A", i, 5.0, 10))
        cmp.add(EpisodeRecord("B", i, 5.0, 10))
    s = cmp.summary()
    assert (s.verdict, s.decided_at, s.contradicted) == ("equivalent", 120, None)
    cmp.add(EpisodeRecord("A", 120, 5.0, 10))
    cmp.add(EpisodeRecord("B", 120, 6.0, 10))
    s = cmp.summary()
    assert s.verdict == "differ" and s.decided_at == 121 and "a seed differs" in s.contradicted


def test_an_exact_decision_gives_way_when_the_env_does_not_repeat_itself():
    proof = ExactProof()
    cmp = Comparison("A", "B", deterministic=True, proof=proof, margin=1.0)
    rng = np.random.default_rng(0)
    for i in range(120):
        x = float(rng.normal(10.0, 3.0))
        cmp.add(EpisodeRecord("A", i, x, 10))
        cmp.add(EpisodeRecord("B", i, x, 10))
    assert cmp.summary().verdict == "equivalent"
    proof.state = REFUTED
    s = cmp.summary()
    assert not s.exact and "withdrawn" in s.contradicted and "statistical" in s.contradicted
    assert (s.verdict, s.decided_at) == ("undecided", None)  # statistical: identical differences give no interval
