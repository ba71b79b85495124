"""The symmetric variance guard of the asymptotic CS (the asymptotic part next to the betting CS with
bounds, and the unpaired fallback; without bounds a path shows the tail-side guard, test_stats_tail_guard):
its formula, the one-pass moments it reads, and what each of its two priors is for (rare returns: the
Kish pseudo-observations; the first looks of skewed returns: the range prior), measured by peeking
simulations sized to run in about a second each."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tui_eval.records import EpisodeRecord
from tui_eval.stats import (
    PathStats,
    asymptotic_cs,
    guarded_asymptotic_cs,
    guarded_asymptotic_cs_from_moments,
    guarded_variance,
)
from tui_eval.stats.coverage import ever_miss
from tui_eval.stats.guards import KISH_PSEUDO, KISH_PSEUDO_BOUNDED, RANGE_FULL_UNTIL, RANGE_PSEUDO, range_weight


def reference_guarded_variance(x, kish):
    """The docstring's formula written out from the values themselves."""
    n = len(x)
    d = x - x.mean()
    m2, m4 = float((d**2).sum()), float((d**4).sum())
    span = float(x.max() - x.min())
    k_range = RANGE_PSEUDO * min(1.0, RANGE_FULL_UNTIL / n) ** 1.5
    prior = k_range * span**2 / 4 + kish * (m4 / m2 if m2 > 0 else 0.0)
    return max(m2 / (n - 1), (prior + m2) / (n + k_range + kish))


@pytest.mark.parametrize("kish", [KISH_PSEUDO, KISH_PSEUDO_BOUNDED])
def test_guarded_variance_is_its_formula_and_never_below_the_sample_variance(kish):
    rng = np.random.default_rng(0)
    for x in (rng.normal(5, 2, 40), rng.standard_t(3, 500), (rng.random(200) < 0.05) * 1.0, rng.exponential(1, 90)):
        d = x - x.mean()
        got = guarded_variance(len(x), (d**2).sum(), x.min(), x.max(), (d**4).sum(), kish=kish)
        assert got == pytest.approx(reference_guarded_variance(x, kish), rel=1e-12)
        assert got >= x.var(ddof=1)
        # without the fourth moment its upper bound (range^2 per Kish pseudo-observation): never narrower
        assert guarded_variance(len(x), (d**2).sum(), x.min(), x.max(), kish=kish) >= got


def test_range_weight_is_full_until_sixty_values_then_fades():
    assert range_weight(30) == range_weight(60) == RANGE_PSEUDO
    assert range_weight(240) == pytest.approx(RANGE_PSEUDO / 8)  # (60/240)^1.5


def test_the_vectorised_guarded_cs_is_the_one_from_moments():
    x = np.random.default_rng(1).lognormal(6.0, 1.0, 400)  # large mean, heavy right tail
    d = x - x.mean()
    lo, hi = guarded_asymptotic_cs(x, kish=KISH_PSEUDO_BOUNDED)
    ref = guarded_asymptotic_cs_from_moments(len(x), x.mean(), (d**2).sum(), x.min(), x.max(), m4=(d**4).sum(),
                                             kish=KISH_PSEUDO_BOUNDED)
    assert [lo[-1], hi[-1]] == pytest.approx(list(ref), rel=1e-9)
    ps = PathStats()
    for i, v in enumerate(x.tolist()):
        ps.add(EpisodeRecord("A", i, v, 1))
    assert ps._m2 == pytest.approx((d**2).sum(), rel=1e-10)
    assert ps.m4 == pytest.approx((d**4).sum(), rel=1e-10)


def test_kish_pseudo_observations_widen_rare_returns_and_barely_touch_continuous_ones():
    """One rare return in 200 (Kish's effective number of squared deviations about 1): the guard adds
    about KISH_PSEUDO such returns; a Gaussian sample (effective number n/3) gains about 5%."""
    rare = np.zeros(200)
    rare[17] = 1.0
    d = rare - rare.mean()
    wide = guarded_variance(200, (d**2).sum(), 0.0, 1.0, (d**4).sum())
    assert wide / rare.var(ddof=1) > 1 + 0.8 * KISH_PSEUDO
    g = np.random.default_rng(2).normal(0, 1, 200)
    d = g - g.mean()
    assert guarded_variance(200, (d**2).sum(), g.min(), g.max(), (d**4).sum()) / g.var(ddof=1) < 1.1


# ------------------------------------------------------------------------------------ coverage

RUNS, LOOKS = 1000, 1000
LIMIT = 0.05 + 3 * math.sqrt(0.05 * 0.95 / RUNS)  # 7.1%


@pytest.mark.parametrize("part", ["kish", "range"])
def test_each_prior_is_needed_the_plain_cs_misses_without_it(part):
    """Bernoulli(0.1) returns need the Kish part (range prior alone: above 5% in the README's table),
    exponential returns the range prior on the first looks: the symmetric guard covers both, while the
    plain asymptotic CS misses above the limit."""
    rng = np.random.default_rng(3)
    x, mu = ((rng.random((RUNS, LOOKS)) < 0.1) * 1.0, 0.1) if part == "kish" else (
        rng.exponential(1.0, (RUNS, LOOKS)), 1.0)
    guarded, zero = ever_miss(*guarded_asymptotic_cs(x), mu)
    lo, hi = asymptotic_cs(x)
    lo[:, :29] = np.nan
    plain, _ = ever_miss(lo, hi, mu)
    print(f"\n{part}: guarded ever-miss {guarded:.1%}, plain {plain:.1%}")
    assert guarded <= LIMIT and zero == 0.0
    assert plain > LIMIT > guarded
