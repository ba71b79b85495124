"""Anytime-valid confidence sequences: analytic checks, coverage by simulation, properties.

Coverage: a (1-alpha) confidence sequence must exclude the true mean at ANY look in at most alpha of
the runs. Each simulation below is vectorised (runs x looks arrays) and checks that rate against
alpha + 3 simulation standard errors, while the naive fixed-n interval, recomputed at every look,
misses far more often. Run with -s to see the printed rates.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from tui_eval.records import EpisodeRecord
from tui_eval.stats import (
    PathStats,
    PrPlEB,
    asymptotic_cs,
    asymptotic_cs_from_moments,
    best_rho2,
    beta_mixture_cs,
    beta_mixture_cs_scalar,
    beta_mixture_log_martingale,
    gaussian_mixture_half_width,
    normal_mixture_cs,
    prpl_eb_cs,
    tail_guarded_cs,
    wilson_interval,
)
from tui_eval.stats.combine import betting_and_asymptotic_cs

ALPHA = 0.05
RUNS, LOOKS = 2000, 1000
# The asymptotic CS (Waudby-Smith et al. 2021) is only asymptotically valid: its guarantee is for
# looks from some start time on, and with a handful of episodes the variance estimate is too noisy.
# PathStats therefore reports it from BURN_IN valid episodes on, and the simulations below start
# looking there. The bounded-data CSs (PrPl-EB, normal mixture) and the beta mixture are checked from
# the very first look.
BURN_IN = PathStats().burn_in
LIMIT = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)  # 5% + 3 simulation standard errors


def any_miss(lo, hi, mu, first_look=1):
    """Fraction of runs whose interval excludes mu at some look >= first_look (NaN bounds: no look)."""
    lo, hi = lo[:, first_look - 1 :], hi[:, first_look - 1 :]
    return float(((lo > mu) | (hi < mu)).any(axis=1).mean())


def naive_t_any_miss(x, mu, first_look=2):
    """The fixed-n 95% t interval, recomputed after every episode."""
    t = np.arange(1, x.shape[1] + 1, dtype=float)
    mean = np.cumsum(x, axis=1) / t
    var = np.maximum(np.cumsum((x - mu) ** 2, axis=1) - t * (mean - mu) ** 2, 0.0) / np.maximum(t - 1, 1)
    half = stats.t.ppf(1 - ALPHA / 2, np.maximum(t - 1, 1)) * np.sqrt(var / t)
    return any_miss(mean - half, mean + half, mu, first_look)


# ---------------------------------------------------------------------------------- analytic checks


def test_best_rho2_minimises_the_width_at_target_n():
    for target in (10, 100, 1000):
        rho2 = best_rho2(target, ALPHA)
        grid = rho2 * np.exp(np.linspace(-2, 2, 401))
        widths = gaussian_mixture_half_width(target, 1.0, ALPHA, rho2=grid)
        assert grid[np.argmin(widths)] == pytest.approx(rho2, rel=0.02)
        approx = (-2 * math.log(ALPHA) + math.log(1 - 2 * math.log(ALPHA))) / target
        assert rho2 == pytest.approx(approx, rel=0.05)  # the closed-form approximation in the paper


def test_gaussian_mixture_boundary_is_where_the_mixture_martingale_hits_one_over_alpha():
    # Robbins' normal mixture: M_n = (n rho^2 + 1)^(-1/2) exp(rho^2 S^2 / (2 (n rho^2 + 1))) for unit
    # variance; the half-width h satisfies M_n(S = n h) = 1/alpha exactly.
    for n in (1, 7, 100, 12345):
        rho2 = best_rho2(100, ALPHA)
        h = float(gaussian_mixture_half_width(n, 1.0, ALPHA, rho2=rho2))
        s = n * h
        log_m = -0.5 * math.log(n * rho2 + 1) + rho2 * s * s / (2 * (n * rho2 + 1))
        assert log_m == pytest.approx(math.log(1 / ALPHA), rel=1e-12)


def test_asymptotic_cs_from_moments_matches_the_array_version():
    x = np.random.default_rng(0).standard_t(3, 300) * 10 + 5
    lo, hi = asymptotic_cs(x, ALPHA)
    for n in (2, 3, 50, 300):
        got = asymptotic_cs_from_moments(n, x[:n].mean(), x[:n].var(ddof=1), ALPHA)
        assert got == pytest.approx((lo[n - 1], hi[n - 1]), rel=1e-9, abs=1e-9)
    assert np.isnan(lo[0]) and asymptotic_cs_from_moments(1, 5.0, math.nan) is None


def test_prpl_eb_running_update_equals_batch_and_pure_function():
    x = np.random.default_rng(1).beta(2, 5, 3000) * 10 - 3
    one = PrPlEB(-3, 7, ALPHA)
    for v in x.tolist():
        one.add(v)
    batch = PrPlEB(-3, 7, ALPHA)
    for chunk in np.array_split(x, 11):
        batch.extend(chunk)
    lo, hi = prpl_eb_cs(x, -3, 7, ALPHA)
    ilo, ihi = prpl_eb_cs(x, -3, 7, ALPHA, intersect=True)
    assert one.current() == pytest.approx((lo[-1], hi[-1]), rel=1e-10)
    assert batch.current() == pytest.approx((lo[-1], hi[-1]), rel=1e-10)
    assert one.interval() == pytest.approx((ilo[-1], ihi[-1]), rel=1e-10)
    assert batch.interval() == pytest.approx((ilo[-1], ihi[-1]), rel=1e-10)


def test_path_stats_cs_is_the_pure_function_at_every_look():
    rng = np.random.default_rng(2)
    x = rng.standard_t(3, 150) * 20 + 100
    unb, bnd = PathStats(), PathStats(return_bounds=(-1e4, 1e4), bounded_cs="prpl-eb")
    bet = PathStats(return_bounds=(-1e4, 1e4))  # the default: hedged betting ∩ asymptotic
    alo, ahi = tail_guarded_cs(x, ALPHA)
    plo, phi = prpl_eb_cs(x, -1e4, 1e4, ALPHA, intersect=True)
    blo, bhi = betting_and_asymptotic_cs(x, -1e4, 1e4, ALPHA)
    for i, v in enumerate(x.tolist()):
        rec = EpisodeRecord("A", i, v, 1)
        unb.add(rec)
        bnd.add(rec)
        bet.add(rec)
        assert bet.cs()[0] == pytest.approx((blo[i], bhi[i]), rel=1e-9)
        su, sb = unb.summary(), bnd.summary()
        if i + 1 < BURN_IN:
            assert su["cs95"] is None
        else:
            assert su["cs95"] == pytest.approx([alo[i], ahi[i]], rel=1e-9)
        assert sb["cs95"] == pytest.approx([plo[i], phi[i]], rel=1e-9)
    assert su["cs_method"] == "asymptotic-cs, variance guarded (Waudby-Smith et al. 2021)"
    assert "PrPl-EB" in sb["cs_method"] and "Waudby-Smith & Ramdas 2023" in sb["cs_method"]
    assert "hedged betting" in bet.cs()[1] and "asymptotic" in bet.cs()[1]
    nm = PathStats(return_bounds=(-1e4, 1e4), bounded_cs="normal-mixture")
    for i, v in enumerate(x.tolist()):
        nm.add(EpisodeRecord("A", i, v, 1))
    nlo, nhi = normal_mixture_cs(x, -1e4, 1e4, ALPHA)
    assert nm.summary()["cs95"] == pytest.approx([nlo[-1], nhi[-1]], rel=1e-9)
    assert "Howard et al. 2021" in nm.summary()["cs_method"]


def test_wrong_bounds_fall_back_to_the_asymptotic_cs():
    ps = PathStats(return_bounds=(0, 10))
    for i, v in enumerate([1.0, 2.0, 50.0] + [5.0 + (i % 3) for i in range(30)]):
        ps.add(EpisodeRecord("A", i, v, 1))
    s = ps.summary()
    assert s["cs_method"].startswith("asymptotic-cs") and "outside the given bounds" in s["cs_method"]
    assert s["cs95"][0] < s["mean"] < s["cs95"][1]


def test_beta_mixture_ends_solve_the_martingale_equation():
    k = np.array([0, 1, 3, 30, 99, 100, 0, 500])
    n = np.array([1, 1, 10, 100, 100, 100, 1000, 1000])
    lo, hi = beta_mixture_cs(k, n, ALPHA)
    target = math.log(1 / ALPHA)
    for i in range(k.size):
        assert (lo[i], hi[i]) == pytest.approx(beta_mixture_cs_scalar(int(k[i]), int(n[i]), ALPHA), abs=1e-12)
        assert lo[i] <= k[i] / n[i] <= hi[i]
        for end, open_at in ((lo[i], k[i] == 0), (hi[i], k[i] == n[i])):
            if not open_at:
                assert float(beta_mixture_log_martingale(k[i], n[i], end)) == pytest.approx(target, abs=1e-6)
    # membership agrees with the martingale on a grid
    p = np.linspace(0.001, 0.999, 999)
    for kk, nn in ((3, 10), (30, 100)):
        a, b = beta_mixture_cs_scalar(kk, nn, ALPHA)
        inside = beta_mixture_log_martingale(kk, nn, p) < target
        assert np.array_equal(inside, (p > a) & (p < b))


# ---------------------------------------------------------------------------------- coverage


def test_asymptotic_cs_coverage_heavy_tailed_student_t3():
    rng = np.random.default_rng(12345)
    mu = 3.0
    x = mu + 10.0 * rng.standard_t(3, (RUNS, LOOKS))
    lo, hi = asymptotic_cs(x, ALPHA)
    miss = any_miss(lo, hi, mu, BURN_IN)
    naive = naive_t_any_miss(x, mu, BURN_IN)
    print(f"\nStudent t(3), {RUNS} runs x {LOOKS} looks from n={BURN_IN}: asymptotic CS misses the mean "
          f"at some look in {miss:.2%} of runs (limit {LIMIT:.2%}); naive t interval at every look: {naive:.2%}")
    assert miss <= LIMIT
    assert naive > 0.15


def test_asymptotic_cs_coverage_bounded_beta():
    rng = np.random.default_rng(777)
    mu = 500 * 2 / 7  # 500 * Beta(2, 5): bounded [0, 500], skewed
    x = 500 * rng.beta(2, 5, (RUNS, LOOKS))
    lo, hi = asymptotic_cs(x, ALPHA)
    miss = any_miss(lo, hi, mu, BURN_IN)
    naive = naive_t_any_miss(x, mu, BURN_IN)
    print(f"\n500*Beta(2,5) from n={BURN_IN}: asymptotic CS {miss:.2%} (limit {LIMIT:.2%}); naive t {naive:.2%}")
    assert miss <= LIMIT
    assert naive > 0.15


@pytest.mark.parametrize("dist", ["beta", "bernoulli"])
def test_bounded_cs_coverage_from_the_first_look(dist):
    rng = np.random.default_rng(4242 if dist == "beta" else 4343)
    if dist == "beta":
        mu, x = 500 * 2 / 7, 500 * rng.beta(2, 5, (RUNS, LOOKS))
    else:  # a sparse-reward task: return 500 with probability 0.3, else 0
        mu, x = 150.0, 500.0 * (rng.random((RUNS, LOOKS)) < 0.3)
    plo, phi = prpl_eb_cs(x, 0, 500, ALPHA, intersect=True)
    nlo, nhi = normal_mixture_cs(x, 0, 500, ALPHA)
    prpl, nmix = any_miss(plo, phi, mu), any_miss(nlo, nhi, mu)
    naive = naive_t_any_miss(x, mu, 2)
    print(f"\n{dist} in [0, 500], from n=1: PrPl-EB misses {prpl:.2%}, normal mixture {nmix:.2%} "
          f"(limit {LIMIT:.2%}); naive t at every look from n=2: {naive:.2%}")
    assert prpl <= LIMIT and nmix <= LIMIT
    assert naive > 0.15
    if dist == "beta":  # low variance: PrPl-EB adapts, the Hoeffding-type normal mixture cannot
        assert np.mean(phi[:, -1] - plo[:, -1]) < np.mean(nhi[:, -1] - nlo[:, -1])


@pytest.mark.parametrize("p", [0.3, 0.03])
def test_beta_mixture_rate_coverage_from_the_first_look(p):
    rng = np.random.default_rng(int(p * 1000))
    k = np.cumsum(rng.random((RUNS, LOOKS)) < p, axis=1)
    n = np.broadcast_to(np.arange(1, LOOKS + 1), k.shape)
    # p is outside the CS exactly when the mixture martingale at p reaches 1/alpha (Ville)
    miss = float((beta_mixture_log_martingale(k, n, p) >= math.log(1 / ALPHA)).any(axis=1).mean())
    wlo, whi = wilson_interval(k, n)
    naive = any_miss(wlo, whi, p)
    print(f"\nBernoulli({p}): beta-mixture CS misses {miss:.2%} (limit {LIMIT:.2%}); "
          f"Wilson at every look: {naive:.2%}")
    assert miss <= LIMIT
    assert naive > 0.15


# ---------------------------------------------------------------------------------- properties

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
samples = st.lists(finite, min_size=BURN_IN, max_size=60)
unit = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=60)


def _cs(values, **kw):
    ps = PathStats(**kw)
    for i, v in enumerate(values):
        ps.add(EpisodeRecord("A", i, float(v), 1))
    return ps.summary()["cs95"]


@settings(max_examples=40, deadline=None)
@given(xs=samples, c=finite)
def test_asymptotic_cs_properties(xs, c):
    x = np.array(xs)
    tol = 1e-7 * (1 + np.abs(x).max() + abs(c))
    if not x.max() > x.min():  # identical returns: no interval rather than a zero-width one
        assert _cs(x) is None
        return
    lo, hi = _cs(x)
    assert lo - tol <= x.mean() <= hi + tol  # contains the sample mean
    lo2, hi2 = _cs(np.concatenate([x, x]))  # more data of the same spread: weakly narrower
    assert hi2 - lo2 <= hi - lo + tol
    lo3, hi3 = _cs(x + c)  # shifting the returns shifts the interval
    assert lo3 == pytest.approx(lo + c, abs=tol) and hi3 == pytest.approx(hi + c, abs=tol)


@settings(max_examples=40, deadline=None)
@given(ys=unit, c=finite)
def test_bounded_cs_properties(ys, c):
    y = np.array(ys) * 100.0  # in [0, 100]
    tol = 1e-7 * (100 + abs(c))
    for method in ("prpl-eb", "normal-mixture"):
        lo, hi = _cs(y, return_bounds=(0.0, 100.0), bounded_cs=method)
        assert 0.0 <= lo <= hi <= 100.0
        if method == "normal-mixture":
            assert lo - tol <= y.mean() <= hi + tol  # centred on the sample mean
        lo2, hi2 = _cs(np.concatenate([y, y]), return_bounds=(0.0, 100.0), bounded_cs=method)
        assert hi2 - lo2 <= hi - lo + tol  # more data: weakly narrower
        lo3, hi3 = _cs(y + c, return_bounds=(c, 100.0 + c), bounded_cs=method)  # shift data and bounds
        assert lo3 == pytest.approx(lo + c, abs=tol) and hi3 == pytest.approx(hi + c, abs=tol)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 300), frac=st.floats(0, 1))
def test_beta_mixture_contains_phat_and_shrinks_with_more_data(n, frac):
    k = int(round(frac * n))
    lo, hi = beta_mixture_cs_scalar(k, n, ALPHA)
    assert lo <= k / n <= hi
    wlo, whi = wilson_interval(k, n)
    assert lo <= wlo + 1e-12 and whi <= hi + 1e-12  # anytime-valid: wider than the fixed-n Wilson
    lo2, hi2 = beta_mixture_cs_scalar(2 * k, 2 * n, ALPHA)
    assert hi2 - lo2 <= hi - lo + 1e-12


def test_normal_mixture_half_width_is_scale_equivariant():
    n = np.arange(1, 500)
    assert np.allclose(gaussian_mixture_half_width(n, 3.0), 3.0 * gaussian_mixture_half_width(n, 1.0))
    assert special.lambertw(-(ALPHA**2) / math.e, k=-1).imag == 0
