"""A vs B: exact mode, statistical verdicts, pairing by (block, seed), symmetry."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tui_eval.records import EpisodeRecord
from tui_eval.stats import Comparison, tail_guarded_cs_from_moments
from tui_eval.views.format import comparison_reason

KEYS = {"a", "b", "paired", "diff_mean", "diff_cs95", "diff_ci95", "method", "margin", "verdict", "exact",
        "identical_pairs", "reason"}


def rec(path, seed, ret, block=0, **kw):
    return EpisodeRecord(path, seed, float(ret), 10, block=block, **kw)


def run(cmp, pairs, a="evaluate", b="connectors"):
    """Feed (seed, ret_a, ret_b) triples, interleaved as the engine would."""
    for seed, ra, rb in pairs:
        cmp.add(rec(a, seed, ra))
        cmp.add(rec(b, seed, rb))
    return cmp.summary()


# ---------------------------------------------------------------------------------- exact mode


def test_deterministic_identical_on_few_seeds_is_undecided_with_a_bound():
    seeds = range(1000, 1010)
    s = run(Comparison("evaluate", "connectors", deterministic=True), [(k, k % 7 * 10.0, k % 7 * 10.0) for k in seeds])
    assert set(s.to_json()) | {"reason"} >= KEYS and comparison_reason(s)
    assert s.verdict == "undecided" and s.exact is True
    assert s.identical_pairs == 10 and s.paired == 10 and s.differing == 0
    assert s.could_differ_upper == pytest.approx(0.377, abs=1e-3)  # Robbins' beta mixture, k = 0, n = 10
    assert "identical on 10/10 seeds" in comparison_reason(s) and "deterministic" in comparison_reason(s)


def test_deterministic_identical_is_equivalent_once_the_bound_is_below_five_percent():
    pairs = [(k, k % 7 * 10.0, k % 7 * 10.0) for k in range(115)]
    cmp = Comparison("evaluate", "connectors", deterministic=True)
    assert run(cmp, pairs).verdict == "undecided"
    s = run(cmp, [(115, 3.0, 3.0)])
    assert s.verdict == "equivalent" and s.exact is True and s.could_differ_upper <= 0.05
    assert "identical on 116/116 seeds" in comparison_reason(s)


def test_deterministic_tiny_float_noise_is_identical_but_float32_spacing_is_not():
    cmp = Comparison("evaluate", "connectors", deterministic=True)
    s = run(cmp, [(1000, 500.0, 500.0 + 1e-9), (1001, 1e7, 1e7 + 1.0)])
    assert (s.verdict, s.identical_pairs, s.differing) == ("undecided", 2, 0)
    s = run(cmp, [(1002, 1e7, 1e7 + 5.0)])
    assert (s.verdict, s.differing) == ("differ", 1)


def test_deterministic_validity_disagreement_is_a_difference():
    cmp = Comparison("A", "B", deterministic=True)
    run(cmp, [(k, 500.0, 500.0) for k in range(200)], a="A", b="B")
    cmp.add(rec("A", 200, 500.0))
    cmp.add(rec("B", 200, 0.0, invalid=True, reason="nan obs"))
    s = cmp.summary()
    assert s.verdict == "differ" and s.exact is True
    assert comparison_reason(s) == "seed 200: A valid vs B invalid with both deterministic"


def test_duplicate_records_are_counted_and_never_replace_the_first():
    cmp = Comparison("A", "B", deterministic=True)
    cmp.add(rec("A", 1, 10.0))
    cmp.add(rec("A", 1, 10.0))  # same result again: counted, not a difference
    cmp.add(rec("B", 1, 10.0))
    s = cmp.summary()
    assert (s.duplicates, s.identical_pairs, s.verdict, s.unmatched_a) == (1, 1, "undecided", 0)
    cmp.add(rec("B", 1, 11.0))  # after pairing, a different result: the seed differs
    s = cmp.summary()
    assert (s.duplicates, s.differing, s.verdict, s.paired) == (2, 1, "differ", 1)
    stat = Comparison("A", "B")
    run(stat, [(k, 1.0 + k % 3, 2.0 + k % 3) for k in range(40)], a="A", b="B")
    stat.add(rec("A", 0, 1000.0))  # a late duplicate does not enter the paired difference
    s = stat.summary()
    assert s.duplicates == 1 and s.paired == 40 and s.diff_mean == pytest.approx(-1.0)


def test_deterministic_one_differing_seed_is_exact_differ():
    pairs = [(k, 500.0, 500.0) for k in range(1000, 1003)] + [(1003, 21.0, 500.0)]
    pairs += [(k, 500.0, 500.0) for k in range(1004, 1050)]
    s = run(Comparison("evaluate", "connectors", deterministic=True), pairs)
    assert s.verdict == "differ" and s.exact is True
    assert comparison_reason(s) == "seed 1003: evaluate 21.0 vs connectors 500.0 with both deterministic"
    assert s.identical_pairs == 49


def test_not_deterministic_is_never_exact():
    s = run(Comparison("evaluate", "connectors"), [(k, 1.0, 1.0) for k in range(5)])
    assert s.exact is False and s.verdict == "undecided"  # 5 pairs: below the CS burn-in
    s = run(Comparison("evaluate", "connectors"), [(k, 1.0, 2.0) for k in range(3)])
    assert s.exact is False


# ---------------------------------------------------------------------------------- statistics


def test_clearly_different_normal_samples_differ():
    rng = np.random.default_rng(0)
    n = 200
    difficulty = rng.normal(0, 50, n)  # a per-seed effect shared by both paths
    ra = 100 + difficulty + rng.normal(0, 5, n)
    rb = 110 + difficulty + rng.normal(0, 5, n)
    s = run(Comparison("evaluate", "connectors"), zip(range(n), ra, rb))
    assert s.method == "paired" and s.paired == n
    assert s.verdict == "differ" and s.exact is False
    d = ra - rb
    assert s.diff_mean == pytest.approx(d.mean())
    ref = stats.ttest_1samp(d, 0).confidence_interval(0.95)
    assert s.diff_ci95 == pytest.approx([ref.low, ref.high], rel=1e-9)
    m2, m3 = d.var() * n, ((d - d.mean()) ** 3).sum()
    ref_cs = tail_guarded_cs_from_moments(n, d.mean(), m2, m3, d.min(), d.max(), 0.025)  # alpha/2: fixed split
    assert s.diff_cs95 == pytest.approx(list(ref_cs), rel=1e-9)
    assert s.diff_cs95[1] < 0
    assert "excludes 0" in comparison_reason(s)
    json.dumps(s.to_json(), allow_nan=False)


def test_same_distribution_large_n_with_margin_is_equivalent():
    rng = np.random.default_rng(1)
    n = 3000
    difficulty = rng.normal(0, 100, n)
    ra = 200 + difficulty + rng.normal(0, 2, n)
    rb = 200 + difficulty + rng.normal(0, 2, n)
    s = run(Comparison("evaluate", "connectors", margin=1.0), zip(range(n), ra, rb))
    assert s.verdict == "equivalent" and s.margin == 1.0
    assert -1.0 < s.diff_cs95[0] < 0 < s.diff_cs95[1] < 1.0
    # with a margin far below the noise it is undecided, never "differ"
    s = run(Comparison("evaluate", "connectors", margin=0.01), zip(range(n), ra, rb))
    assert s.verdict == "undecided"


def test_default_margin_is_frozen_after_the_burn_in_and_never_moves():
    cmp = Comparison("a", "b", margin_burn_in=3)
    s = run(cmp, [(0, 10.0, 12.0), (1, 30.0, 50.0)], a="a", b="b")
    assert s.margin is None and "once both paths have 3" in s.margin_source
    s = run(cmp, [(2, 20.0, 20.0)], a="a", b="b")
    assert s.margin == pytest.approx(0.05 * (50.0 - 10.0)) and "frozen" in s.margin_source
    s = run(cmp, [(3, -1e6, 1e6)], a="a", b="b")  # an outlier later: the margin stays
    assert s.margin == pytest.approx(2.0)
    s = run(Comparison("a", "b", margin_burn_in=2), [(0, 5.0, 5.0), (1, 5.0, 5.0)], a="a", b="b")
    assert s.margin is None and "identical" in s.margin_source
    assert Comparison("a", "b").summary().margin is None


def test_margin_from_return_bounds_or_given_is_fixed_from_the_start():
    s = Comparison("a", "b", return_bounds=(0.0, 500.0, "CartPole-v1")).summary()
    assert s.margin == pytest.approx(25.0) and "return bounds [0, 500]" in s.margin_source
    s = Comparison("a", "b", margin=3.0, return_bounds=(0.0, 500.0)).summary()
    assert (s.margin, s.margin_source) == (3.0, "given")


def test_unmatched_seeds_wait_for_their_partner():
    cmp = Comparison("A", "B")
    for k in range(100):
        cmp.add(rec("A", k, k))
    for k in range(50, 150):
        cmp.add(rec("B", k, k + 1.0))
    s = cmp.summary()
    assert s.paired == 50 and s.unmatched_a == 50 and s.unmatched_b == 50
    for k in range(50):
        cmp.add(rec("B", k, k + 1.0))
    s = cmp.summary()
    assert s.paired == 100 and s.unmatched_a == 0 and s.unmatched_b == 50
    assert s.diff_mean == pytest.approx(-1.0)
    # the same seed in another block is another episode
    cmp.add(rec("A", 120, 0.0, block=1))
    assert cmp.summary().paired == 100 and cmp.summary().unmatched_a == 1


def test_invalid_and_foreign_records():
    cmp = Comparison("A", "B")
    cmp.add(rec("A", 1, 5.0))
    cmp.add(EpisodeRecord("B", 1, 1e9, 3, invalid=True, reason="nan obs"))  # pair formed, not used
    cmp.add(rec("C", 1, 123.0))  # another path: ignored
    cmp.add(rec("A", 2, 5.0))
    cmp.add(rec("B", 2, float("nan")))  # non-finite return: treated as invalid
    s = cmp.summary()
    assert s.matched == 2 and s.paired == 0 and s.unmatched_a == 0 and s.unmatched_b == 0
    assert s.method is None and s.verdict == "undecided"
    json.dumps(s.to_json(), allow_nan=False)


def test_falls_back_to_welch_without_pairs():
    rng = np.random.default_rng(2)
    cmp = Comparison("A", "B")
    a, b = rng.normal(0, 1, 300), rng.normal(3, 1, 300)
    for k in range(300):  # disjoint seed blocks: nothing pairs
        cmp.add(rec("A", k, a[k]))
        cmp.add(rec("B", 10_000 + k, b[k]))
    s = cmp.summary()
    assert s.paired == 0 and s.method == "welch" and s.verdict == "differ"
    ref = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert s.diff_ci95 == pytest.approx([ref.low, ref.high], rel=1e-9)
    assert s.diff_mean == pytest.approx(a.mean() - b.mean())
    # combined per-path CSs at alpha/2 each: wider than the fixed-n Welch interval
    assert s.diff_cs95[0] < ref.low and ref.high < s.diff_cs95[1]
    # one pair is not enough to switch to the paired method
    cmp.add(rec("B", 0, 7.0))
    assert cmp.summary().method == "welch" and cmp.summary().paired == 1


def test_success_rate_feeds_the_verdict_with_bonferroni():
    cmp = Comparison("A", "B", margin=100.0)
    for k in range(400):  # identical returns, very different success
        cmp.add(rec("A", k, 1.0 + (k % 3), success=True))
        cmp.add(rec("B", k, 1.0 + (k % 3), success=k % 2 == 0))
    s = cmp.summary()
    assert s.alpha_each == pytest.approx(0.025)
    assert s.verdict == "differ" and s.success_diff_cs95[0] > 0
    assert s.diff_cs95 is None  # identical differences: no zero-width interval
    no_success = run(Comparison("A", "B"), [(k, 1.0, 2.0) for k in range(40)], a="A", b="B")
    assert no_success.alpha_each == pytest.approx(0.025)  # the split is fixed at the start


# ---------------------------------------------------------------------------------- symmetry

episode = st.tuples(st.integers(0, 15), st.floats(-100, 100, allow_nan=False), st.booleans())


@settings(max_examples=40, deadline=None)
@given(
    a_eps=st.lists(episode, min_size=0, max_size=60),
    b_eps=st.lists(episode, min_size=0, max_size=60),
    shift=st.floats(-5, 5, allow_nan=False),
    margin=st.one_of(st.none(), st.floats(0.1, 50)),
    deterministic=st.booleans(),
)
def test_verdict_is_symmetric_in_a_and_b(a_eps, b_eps, shift, margin, deterministic):
    records = []
    for i in range(max(len(a_eps), len(b_eps))):  # interleave as the engine would
        if i < len(a_eps):
            seed, ret, ok = a_eps[i]
            records.append(EpisodeRecord("A", seed, ret + shift, 1, invalid=not ok and seed % 5 == 0))
        if i < len(b_eps):
            seed, ret, ok = b_eps[i]
            records.append(EpisodeRecord("B", seed, ret, 1, invalid=not ok and seed % 5 == 0))
    ab = Comparison("A", "B", margin=margin, deterministic=deterministic, burn_in=3)
    ba = Comparison("B", "A", margin=margin, deterministic=deterministic, burn_in=3)
    for r in records:
        ab.add(r)
        ba.add(r)
    s, t = ab.summary().to_json(), ba.summary().to_json()
    assert s["verdict"] == t["verdict"] and s["exact"] == t["exact"] and s["method"] == t["method"]
    assert s["paired"] == t["paired"] and s["margin"] == t["margin"]
    for key in ("diff_cs95", "diff_ci95"):
        if s[key] is None:
            assert t[key] is None
        else:
            assert t[key] == pytest.approx([-s[key][1], -s[key][0]], rel=1e-9, abs=1e-9)
    if s["diff_mean"] is not None:
        assert t["diff_mean"] == pytest.approx(-s["diff_mean"], rel=1e-9, abs=1e-9)
    json.dumps(s, allow_nan=False)


def test_a_summary_is_frozen_and_survives_its_json_unchanged():
    """What an attached viewer reads back from the run's saved snapshot is the summary the owner saw."""
    import dataclasses

    from tui_eval.stats import ComparisonSummary

    cmp = Comparison("A", "B", deterministic=True)
    for seed, ret_b in ((1, 1.0), (2, 3.5)):
        cmp.add(rec("A", seed, 1.0, success=True))
        cmp.add(rec("B", seed, ret_b, success=False))
    s = cmp.summary()
    assert s.first_difference is not None and s.first_difference.seed == 1 and s.first_difference.b.success is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.verdict = "equivalent"  # type: ignore[misc]
    back = ComparisonSummary.from_json(json.loads(json.dumps(s.to_json())))
    assert back == s and comparison_reason(back) == comparison_reason(s)
    assert "seed 1: A success=True vs B success=False" in comparison_reason(s)
