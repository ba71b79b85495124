"""Fixed-n intervals, running moments and PathStats against scipy/numpy references."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tui_eval.records import EpisodeRecord
from tui_eval.stats import (
    PathStats,
    RunningMoments,
    clopper_pearson_interval,
    iqm,
    iqm_bootstrap_ci,
    iqm_fast,
    t_interval,
    t_interval_from_moments,
    welch_interval_from_moments,
    welford,
    wilson_interval,
)

SUMMARY_KEYS = {
    "episodes", "valid", "mean", "std", "min", "max", "ci95", "cs95", "cs_method", "iqm", "iqm_ci95",
    "success_rate", "success_ci95", "success_cs95", "invalid", "invalid_rate", "invalid_ci95",
    "invalid_cs95", "mean_length",
}


def datasets():
    rng = np.random.default_rng(20240601)
    return [
        np.array([1.0, 2.0]),
        np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]),
        rng.normal(10.0, 3.0, 37),
        rng.standard_t(3, 500) * 50.0 + 200.0,
        rng.lognormal(0.0, 1.5, 101),
        np.full(5, 7.25),
    ]


def feed(values, path="A", **kw) -> PathStats:
    ps = PathStats(**kw)
    for i, v in enumerate(np.asarray(values, dtype=float).tolist()):
        ps.add(EpisodeRecord(path, 1000 + i, v, 10 + i))
    return ps


# ---------------------------------------------------------------------------------- t and Welch


@pytest.mark.filterwarnings("ignore:Precision loss occurred")  # scipy, on the constant data set
@pytest.mark.parametrize("x", datasets(), ids=lambda x: f"n{x.size}")
def test_t_interval_equals_scipy_ttest_1samp(x):
    ref = stats.ttest_1samp(x, 0.0).confidence_interval(0.95)
    lo, hi = t_interval(x)
    assert lo == pytest.approx(ref.low, rel=1e-10, abs=1e-12)
    assert hi == pytest.approx(ref.high, rel=1e-10, abs=1e-12)
    # the streaming PathStats gives the same final-report interval
    ci = feed(x).summary()["ci95"]
    assert ci == pytest.approx([ref.low, ref.high], rel=1e-9, abs=1e-9)


def test_t_interval_other_alpha_equals_scipy():
    x = datasets()[2]
    ref = stats.ttest_1samp(x, 0.0).confidence_interval(0.9)
    assert t_interval(x, alpha=0.1) == pytest.approx((ref.low, ref.high), rel=1e-10)


def test_t_interval_undefined_below_two():
    assert t_interval([3.0]) is None
    assert t_interval_from_moments(1, 3.0, math.nan) is None
    assert feed([3.0]).summary()["ci95"] is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_welch_interval_equals_scipy_ttest_ind(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(0, 1, 20 + seed), rng.normal(0.5, 3, 45)
    ref = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    got = welch_interval_from_moments(a.size, a.mean(), a.var(ddof=1), b.size, b.mean(), b.var(ddof=1))
    assert got == pytest.approx((ref.low, ref.high), rel=1e-9)


# ---------------------------------------------------------------------------------- proportions

KN = [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (1, 1000), (500, 1000), (999, 1000), (7, 13)]


@pytest.mark.parametrize("k,n", KN)
def test_wilson_equals_scipy_binomtest(k, n):
    ref = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)


def test_wilson_vectorised_equals_scalar():
    k = np.array([k for k, _ in KN])
    n = np.array([n for _, n in KN])
    lo, hi = wilson_interval(k, n)
    for i, (kk, nn) in enumerate(KN):
        assert (lo[i], hi[i]) == pytest.approx(wilson_interval(kk, nn), abs=1e-14)


@pytest.mark.parametrize("k,n", KN)
def test_clopper_pearson_equals_scipy_binomtest(k, n):
    ref = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert clopper_pearson_interval(k, n) == pytest.approx((ref.low, ref.high), abs=1e-10)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 400), frac=st.floats(0, 1))
def test_wilson_contains_phat_and_shrinks_with_more_data(n, frac):
    k = int(round(frac * n))
    lo, hi = wilson_interval(k, n)
    assert lo <= k / n <= hi
    lo2, hi2 = wilson_interval(2 * k, 2 * n)  # same proportion, twice the data
    assert hi2 - lo2 <= hi - lo + 1e-12


# ---------------------------------------------------------------------------------- IQM


@pytest.mark.parametrize("n", list(range(1, 13)) + [99, 1000, 4097])
def test_iqm_equals_scipy_trim_mean(n):
    x = np.random.default_rng(n).lognormal(0, 1, n)
    ref = stats.trim_mean(x, 0.25)
    assert iqm(x) == ref
    assert iqm_fast(x) == pytest.approx(ref, rel=1e-12)
    y = x.copy()
    assert iqm_fast(y, overwrite=True) == pytest.approx(ref, rel=1e-12)
    rows = np.random.default_rng(n + 1).normal(size=(4, n))
    assert iqm_fast(rows) == pytest.approx(stats.trim_mean(rows, 0.25, axis=1), rel=1e-12, abs=1e-12)


def test_path_iqm_equals_trim_mean_of_valid_returns():
    rng = np.random.default_rng(5)
    ps = PathStats()
    valid = []
    for i, v in enumerate(rng.normal(0, 1, 300).tolist()):
        invalid = i % 17 == 0
        ps.add(EpisodeRecord("A", i, 1e6 if invalid else v, 5, invalid=invalid))
        if not invalid:
            valid.append(v)
        if i in (1, 2, 3, 50, 299):
            assert ps.summary()["iqm"] == pytest.approx(stats.trim_mean(valid, 0.25), rel=1e-12)


def _percentile_bootstrap_reference(x, reps, rng_seed, alpha=0.05):
    rng = np.random.default_rng(rng_seed)
    idx = rng.integers(0, x.size, size=(reps, x.size), dtype=np.int32)
    boots = stats.trim_mean(x[idx], 0.25, axis=1)
    return tuple(np.quantile(boots, [alpha / 2, 1 - alpha / 2]))


def test_iqm_bootstrap_small_n_is_the_percentile_bootstrap():
    x = np.random.default_rng(3).normal(5, 2, 120)
    got = iqm_bootstrap_ci(x, reps=800, rng=11)
    assert got == pytest.approx(_percentile_bootstrap_reference(x, 800, 11), rel=1e-12)


def test_iqm_bootstrap_m_out_of_n_matches_full_bootstrap_width():
    # at n = 4000 the m-out-of-n interval (m = 500, rescaled) should be about as wide as the plain
    # percentile bootstrap on all n, and centred on the IQM
    x = np.random.default_rng(8).standard_t(4, 4000) * 3 + 1
    full = iqm_bootstrap_ci(x, reps=1000, max_resample=x.size, rng=1)
    sub = iqm_bootstrap_ci(x, reps=1000, max_resample=500, rng=1)
    w_full, w_sub = full[1] - full[0], sub[1] - sub[0]
    print(f"\nIQM 95% bootstrap width at n=4000: full {w_full:.4f}, m-out-of-n (m=500) {w_sub:.4f}")
    assert 0.75 < w_sub / w_full < 1.33
    assert sub[0] < stats.trim_mean(x, 0.25) < sub[1]


def test_iqm_bootstrap_m_out_of_n_coverage():
    # N(0, 1): the population IQM is 0 by symmetry. 200 data sets of n = 2000 (m-out-of-n path).
    rng = np.random.default_rng(99)
    runs, n = 200, 2000
    hits = 0
    for r in range(runs):
        lo, hi = iqm_bootstrap_ci(rng.normal(size=n), reps=500, rng=r)
        hits += lo <= 0.0 <= hi
    cover = hits / runs
    print(f"\nIQM m-out-of-n bootstrap 95% coverage over {runs} runs: {cover:.3f}")
    assert 0.88 <= cover <= 0.995


# ---------------------------------------------------------------------------------- running moments


@pytest.mark.parametrize("x", datasets(), ids=lambda x: f"n{x.size}")
def test_welford_equals_numpy(x):
    acc = welford(x)
    assert acc.n == x.size
    assert acc.mean == pytest.approx(np.mean(x), rel=1e-12, abs=1e-12)
    assert acc.std == pytest.approx(np.std(x, ddof=1), rel=1e-9, abs=1e-12)
    assert (acc.min, acc.max) == (x.min(), x.max())
    half = x.size // 2
    left, right = welford(x[:half]), welford(x[half:])
    left.merge(right)
    assert left.mean == pytest.approx(np.mean(x), rel=1e-12, abs=1e-12)
    assert left.var == pytest.approx(np.var(x, ddof=1), rel=1e-9, abs=1e-12)


def test_welford_is_stable_with_a_large_offset():
    x = 1e9 + np.random.default_rng(1).normal(0, 1, 1000)
    assert welford(x).var == pytest.approx(np.var(x, ddof=1), rel=1e-6)
    assert RunningMoments().n == 0


def test_path_summary_matches_numpy_and_counts():
    rng = np.random.default_rng(7)
    ps = PathStats()
    valid, lengths, succ = [], [], 0
    n_total = 400
    for i in range(n_total):
        invalid = i % 9 == 0
        ret = float(rng.normal(50, 10))
        success = bool(rng.random() < 0.6)
        length = int(rng.integers(10, 100))
        ps.add(EpisodeRecord("A", i, ret, length, success=success, invalid=invalid))
        if not invalid:
            valid.append(ret)
            lengths.append(length)
            succ += success
    x = np.array(valid)
    s = ps.summary()
    assert set(s) >= SUMMARY_KEYS
    assert s["episodes"] == n_total and s["valid"] == x.size and s["invalid"] == n_total - x.size
    assert s["mean"] == pytest.approx(x.mean(), rel=1e-12)
    assert s["std"] == pytest.approx(x.std(ddof=1), rel=1e-10)
    assert (s["min"], s["max"]) == (x.min(), x.max())
    assert s["mean_length"] == pytest.approx(np.mean(lengths))
    # success over ALL episodes, invalid ones count as failures
    assert s["success_rate"] == pytest.approx(succ / n_total)
    ref = stats.binomtest(succ, n_total).proportion_ci(0.95, method="wilson")
    assert s["success_ci95"] == pytest.approx([ref.low, ref.high], abs=1e-12)
    ref = stats.binomtest(n_total - x.size, n_total).proportion_ci(0.95, method="wilson")
    assert s["invalid_rate"] == pytest.approx((n_total - x.size) / n_total)
    assert s["invalid_ci95"] == pytest.approx([ref.low, ref.high], abs=1e-12)
    for key in ("success_cs95", "invalid_cs95"):  # anytime interval: wider than the fixed-n one
        fixed = s[key.replace("cs95", "ci95")]
        assert s[key][0] <= fixed[0] and fixed[1] <= s[key][1]
    json.dumps(s, allow_nan=False)


def test_path_summary_undefined_values_are_none():
    empty = PathStats().summary()
    assert set(empty) >= SUMMARY_KEYS
    for key in ("mean", "std", "min", "max", "ci95", "cs95", "iqm", "iqm_ci95", "success_rate",
                "success_ci95", "success_cs95", "invalid_rate", "mean_length"):
        assert empty[key] is None, key
    json.dumps(empty, allow_nan=False)
    ps = PathStats()
    ps.add(EpisodeRecord("A", 1, 3.0, 5))  # success None everywhere: no success signal
    ps.add(EpisodeRecord("A", 2, math.nan, 5))  # a non-finite return is not a valid return
    s = ps.summary()
    assert s["success_rate"] is None and s["std"] is None and s["ci95"] is None
    assert s["valid"] == 1 and s["invalid"] == 1 and s["mean"] == 3.0
    json.dumps(s, allow_nan=False)


# ---------------------------------------------------------------------------------- properties

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
samples = st.lists(finite, min_size=3, max_size=40)


@settings(max_examples=50, deadline=None)
@given(xs=samples, c=finite)
def test_t_interval_properties(xs, c):
    x = np.array(xs)
    tol = 1e-7 * (1 + np.abs(x).max() + abs(c))
    lo, hi = t_interval(x)
    assert lo - tol <= x.mean() <= hi + tol
    lo2, hi2 = t_interval(np.concatenate([x, x]))  # twice the data, same spread
    assert hi2 - lo2 <= hi - lo + tol
    lo3, hi3 = t_interval(x + c)  # shift-equivariant
    assert lo3 == pytest.approx(lo + c, abs=tol) and hi3 == pytest.approx(hi + c, abs=tol)
