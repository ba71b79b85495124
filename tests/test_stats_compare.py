"""A vs B: exact mode, statistical verdicts, pairing by (block, seed), symmetry."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tui_eval.spec import EpisodeRecord
from tui_eval.stats import Comparison, asymptotic_cs_from_moments

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


def test_deterministic_identical_is_exact_equivalent():
    seeds = range(1000, 1010)
    s = run(Comparison("evaluate", "connectors", deterministic=True), [(k, k % 7 * 10.0, k % 7 * 10.0) for k in seeds])
    assert set(s) >= KEYS
    assert s["verdict"] == "equivalent" and s["exact"] is True
    assert s["identical_pairs"] == 10 and s["paired"] == 10
    assert "10 paired seed" in s["reason"] and "deterministic" in s["reason"]


def test_deterministic_one_pair_is_enough_and_tiny_float_noise_is_identical():
    cmp = Comparison("evaluate", "connectors", deterministic=True)
    s = run(cmp, [(1000, 500.0, 500.0 + 1e-9)])
    assert (s["verdict"], s["exact"], s["identical_pairs"]) == ("equivalent", True, 1)


def test_deterministic_one_differing_seed_is_exact_differ():
    pairs = [(k, 500.0, 500.0) for k in range(1000, 1003)] + [(1003, 21.0, 500.0)]
    pairs += [(k, 500.0, 500.0) for k in range(1004, 1050)]
    s = run(Comparison("evaluate", "connectors", deterministic=True), pairs)
    assert s["verdict"] == "differ" and s["exact"] is True
    assert s["reason"] == "seed 1003: evaluate 21.0 vs connectors 500.0 with both deterministic"
    assert s["identical_pairs"] == 49


def test_not_deterministic_is_never_exact():
    s = run(Comparison("evaluate", "connectors"), [(k, 1.0, 1.0) for k in range(5)])
    assert s["exact"] is False and s["verdict"] == "undecided"  # 5 pairs: below the CS burn-in
    s = run(Comparison("evaluate", "connectors"), [(k, 1.0, 2.0) for k in range(3)])
    assert s["exact"] is False


# ---------------------------------------------------------------------------------- statistics


def test_clearly_different_normal_samples_differ():
    rng = np.random.default_rng(0)
    n = 200
    difficulty = rng.normal(0, 50, n)  # a per-seed effect shared by both paths
    ra = 100 + difficulty + rng.normal(0, 5, n)
    rb = 110 + difficulty + rng.normal(0, 5, n)
    s = run(Comparison("evaluate", "connectors"), zip(range(n), ra, rb))
    assert s["method"] == "paired" and s["paired"] == n
    assert s["verdict"] == "differ" and s["exact"] is False
    d = ra - rb
    assert s["diff_mean"] == pytest.approx(d.mean())
    ref = stats.ttest_1samp(d, 0).confidence_interval(0.95)
    assert s["diff_ci95"] == pytest.approx([ref.low, ref.high], rel=1e-9)
    assert s["diff_cs95"] == pytest.approx(list(asymptotic_cs_from_moments(n, d.mean(), d.var(ddof=1), 0.05)), rel=1e-9)
    assert s["diff_cs95"][1] < 0
    assert "excludes 0" in s["reason"]
    json.dumps(s, allow_nan=False)


def test_same_distribution_large_n_with_margin_is_equivalent():
    rng = np.random.default_rng(1)
    n = 3000
    difficulty = rng.normal(0, 100, n)
    ra = 200 + difficulty + rng.normal(0, 2, n)
    rb = 200 + difficulty + rng.normal(0, 2, n)
    s = run(Comparison("evaluate", "connectors", margin=1.0), zip(range(n), ra, rb))
    assert s["verdict"] == "equivalent" and s["margin"] == 1.0
    assert -1.0 < s["diff_cs95"][0] < 0 < s["diff_cs95"][1] < 1.0
    # with a margin far below the noise it is undecided, never "differ"
    s = run(Comparison("evaluate", "connectors", margin=0.01), zip(range(n), ra, rb))
    assert s["verdict"] == "undecided"


def test_default_margin_is_five_percent_of_the_observed_range():
    s = run(Comparison("a", "b"), [(0, 10.0, 12.0), (1, 30.0, 50.0), (2, 20.0, 20.0)], a="a", b="b")
    assert s["margin"] == pytest.approx(0.05 * (50.0 - 10.0))
    s = run(Comparison("a", "b"), [(0, 5.0, 5.0)], a="a", b="b")
    assert s["margin"] == 1e-9
    assert Comparison("a", "b").summary()["margin"] is None


def test_unmatched_seeds_wait_for_their_partner():
    cmp = Comparison("A", "B")
    for k in range(100):
        cmp.add(rec("A", k, k))
    for k in range(50, 150):
        cmp.add(rec("B", k, k + 1.0))
    s = cmp.summary()
    assert s["paired"] == 50 and s["unmatched_a"] == 50 and s["unmatched_b"] == 50
    for k in range(50):
        cmp.add(rec("B", k, k + 1.0))
    s = cmp.summary()
    assert s["paired"] == 100 and s["unmatched_a"] == 0 and s["unmatched_b"] == 50
    assert s["diff_mean"] == pytest.approx(-1.0)
    # the same seed in another block is another episode
    cmp.add(rec("A", 120, 0.0, block=1))
    assert cmp.summary()["paired"] == 100 and cmp.summary()["unmatched_a"] == 1


def test_invalid_and_foreign_records():
    cmp = Comparison("A", "B")
    cmp.add(rec("A", 1, 5.0))
    cmp.add(EpisodeRecord("B", 1, 1e9, 3, invalid=True, reason="nan obs"))  # pair formed, not used
    cmp.add(rec("C", 1, 123.0))  # another path: ignored
    cmp.add(rec("A", 2, 5.0))
    cmp.add(rec("B", 2, float("nan")))  # non-finite return: treated as invalid
    s = cmp.summary()
    assert s["matched"] == 2 and s["paired"] == 0 and s["unmatched_a"] == 0 and s["unmatched_b"] == 0
    assert s["method"] is None and s["verdict"] == "undecided"
    json.dumps(s, allow_nan=False)


def test_falls_back_to_welch_without_pairs():
    rng = np.random.default_rng(2)
    cmp = Comparison("A", "B")
    a, b = rng.normal(0, 1, 300), rng.normal(3, 1, 300)
    for k in range(300):  # disjoint seed blocks: nothing pairs
        cmp.add(rec("A", k, a[k]))
        cmp.add(rec("B", 10_000 + k, b[k]))
    s = cmp.summary()
    assert s["paired"] == 0 and s["method"] == "welch" and s["verdict"] == "differ"
    ref = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert s["diff_ci95"] == pytest.approx([ref.low, ref.high], rel=1e-9)
    assert s["diff_mean"] == pytest.approx(a.mean() - b.mean())
    # combined per-path CSs at alpha/2 each: wider than the fixed-n Welch interval
    assert s["diff_cs95"][0] < ref.low and ref.high < s["diff_cs95"][1]
    # one pair is not enough to switch to the paired method
    cmp.add(rec("B", 0, 7.0))
    assert cmp.summary()["method"] == "welch" and cmp.summary()["paired"] == 1


def test_success_rate_feeds_the_verdict_with_bonferroni():
    cmp = Comparison("A", "B", margin=100.0)
    for k in range(400):  # identical returns, very different success
        cmp.add(rec("A", k, 1.0 + (k % 3), success=True))
        cmp.add(rec("B", k, 1.0 + (k % 3), success=k % 2 == 0))
    s = cmp.summary()
    assert s["alpha_each"] == pytest.approx(0.025)
    assert s["verdict"] == "differ" and s["success_diff_cs95"][0] > 0
    assert s["diff_cs95"] == [0.0, 0.0]
    no_success = run(Comparison("A", "B"), [(k, 1.0, 2.0) for k in range(40)], a="A", b="B")
    assert no_success["alpha_each"] == pytest.approx(0.05)


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
    s, t = ab.summary(), ba.summary()
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
