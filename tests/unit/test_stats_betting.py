"""The hedged betting confidence sequence (Waudby-Smith & Ramdas 2023) and its intersection with the
guarded asymptotic CS: the paper's reference formulas, incremental = vectorised, narrower than
PrPl-EB (as the paper's simulations show), and coverage under a look after every episode on the shapes users meet,
with and without bounds. Sized to run in a few seconds; `bench/bench_stats.py --power` runs more.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tui_eval.stats import prpl_eb_cs, tail_guarded_cs
from tui_eval.stats.betting import BettingState, hedged_betting_cs, hedged_log_capital
from tui_eval.stats.combine import ASYMPTOTIC_SHARE, intersect
from tui_eval.stats.coverage import CAP, CAPPED_MEAN, capped_returns, combined_ever_miss, ever_miss

ALPHA = 0.05


def reference_hedged_cs(x, alpha=ALPHA, breaks=1000):
    """The paper's hedged capital CS written out as the `confseq` package's `hedged_cs` computes it
    (confseq 0.0.11, betting.py: betting_mart with lambda_predmix_eb, theta 1/2, trunc_scale 1/2,
    cs_from_martingale's grid, +-1/breaks, running intersection), one candidate mean at a time."""
    t = np.arange(1, len(x) + 1)
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    s2_prev = np.append(0.25, s2[:-1])
    lam = np.sqrt(2 * np.log(1 / (alpha / 2)) / (t * np.log(1 + t) * s2_prev))
    grid = np.arange(0, 1 + 1 / breaks, step=1 / breaks)
    inside = np.zeros((len(grid), len(x)), dtype=bool)
    for i, m in enumerate(grid):
        with np.errstate(divide="ignore"):
            lp, ln = np.minimum(lam, 0.5 / m), np.minimum(lam, 0.5 / (1 - m))
        k_pos = np.cumprod(1 + lp * (x - m))
        k_neg = np.cumprod(1 - ln * (x - m))
        inside[i] = np.maximum(0.5 * k_pos, 0.5 * k_neg) <= 1 / alpha
    lo = np.array([grid[np.flatnonzero(c)[0]] if c.any() else 0.0 for c in inside.T])
    hi = np.array([grid[np.flatnonzero(c)[-1]] if c.any() else 1.0 for c in inside.T])
    lo, hi = np.maximum(0, lo - 1 / breaks), np.minimum(1, hi + 1 / breaks)
    return np.maximum.accumulate(lo), np.minimum.accumulate(hi)


@pytest.mark.parametrize("shape", ["beta", "bernoulli", "capped"])
def test_hedged_betting_cs_is_the_papers_reference_formula(shape):
    rng = np.random.default_rng(4)
    x = {"beta": rng.beta(2, 5, 150), "bernoulli": (rng.random(150) < 0.2) * 1.0,
         "capped": capped_returns(rng, 150) / CAP}[shape]
    lo, hi = hedged_betting_cs(x)
    rlo, rhi = reference_hedged_cs(x)
    np.testing.assert_allclose(lo, rlo, atol=1e-12)
    np.testing.assert_allclose(hi, rhi, atol=1e-12)
    # and the log-capital reference form agrees with the grid's verdicts
    log_k = hedged_log_capital(x, np.array([rlo[-1] + 0.01, rhi[-1] - 0.01]))
    assert (log_k[0, :, 0] <= math.log(1 / ALPHA)).all() or rlo[-1] + 0.01 > rhi[-1] - 0.01


def test_incremental_updates_equal_one_vectorised_pass():
    x = np.random.default_rng(5).beta(2, 5, 2000)
    lo, hi = hedged_betting_cs(x, 0.0, 1.0, 0.01)
    state = BettingState(0.01)
    for chunk in np.array_split(x, [1, 2, 5, 40, 41, 300, 1999]):
        state.extend(chunk[None, :])
        got = state.interval()
        assert (float(got[0][0]), float(got[1][0])) == pytest.approx((lo[state.t - 1], hi[state.t - 1]), abs=1e-12)
    assert state.b - state.a + 1 < 200  # the window shrank with the interval: cheap updates


def test_narrower_than_prpl_eb_as_in_the_paper():
    """Waudby-Smith & Ramdas (2023): the hedged capital CS is tighter than PrPl-EB."""
    x = np.random.default_rng(6).beta(2, 5, (50, 1000))
    blo, bhi = hedged_betting_cs(x)
    plo, phi = prpl_eb_cs(x, 0, 1, ALPHA, intersect=True)
    for n, share in ((30, 0.8), (100, 0.9), (1000, 1.0)):  # most at small n
        assert (bhi - blo)[:, n - 1].mean() < share * (phi - plo)[:, n - 1].mean()


def test_intersection_keeps_the_non_asymptotic_part_when_parts_disagree():
    assert intersect((0.0, 2.0), (1.0, 3.0)) == (1.0, 2.0)
    assert intersect((0.0, 2.0), None) == (0.0, 2.0)
    assert intersect((0.0, 1.0), (2.0, 3.0)) == (0.0, 1.0)  # disjoint: only in the <= alpha event


# ------------------------------------------------------------------------------------ coverage

RUNS, LOOKS = 300, 300
LIMIT = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)  # 8.8%: 5% + 3 simulation standard errors
LN_CLIP = 20.0
LN_CLIPPED_MEAN = math.exp(0.5) * stats.norm.cdf(math.log(LN_CLIP) - 1) + LN_CLIP * stats.norm.sf(math.log(LN_CLIP))

# name -> (sampler, true mean, bounds)
SHAPES = {
    "Gaussian (Pendulum-like), bounds [-3254.7, 0]": (
        lambda r, s: np.clip(r.normal(-1100.0, 220.0, s), -3254.7, 0.0), -1100.0, (-3254.7, 0.0)),
    "t3 clipped to [-30, 30]": (lambda r, s: np.clip(r.standard_t(3, s), -30, 30), 0.0, (-30.0, 30.0)),
    "capped CartPole, bounds 0:500": (capped_returns, CAPPED_MEAN, (0.0, CAP)),
    "lognormal(0, 1) clipped to [0, 20]": (
        lambda r, s: np.minimum(r.lognormal(0.0, 1.0, s), LN_CLIP), LN_CLIPPED_MEAN, (0.0, LN_CLIP)),
    "Bernoulli(0.1)": (lambda r, s: (r.random(s) < 0.1) * 1.0, 0.1, (0.0, 1.0)),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_betting_and_its_intersection_cover_under_peeking(name):
    """The betting set never grows, so it ever misses iff it misses at the last look."""
    sampler, mu, (lo, hi) = SHAPES[name]
    x = sampler(np.random.default_rng(21), (RUNS, LOOKS))
    bet = BettingState(ALPHA, runs=RUNS)
    bet.extend((x - lo) / (hi - lo))
    blo, bhi = bet.interval()
    bet_miss = float(((lo + (hi - lo) * blo > mu) | (lo + (hi - lo) * bhi < mu)).mean())
    both_miss = combined_ever_miss(x, lo, hi, mu)
    print(f"\n{name}: betting ever-miss {bet_miss:.1%}, betting ∩ asymptotic ({ASYMPTOTIC_SHARE:.0%}) "
          f"{both_miss:.1%}")
    assert bet_miss <= LIMIT and both_miss <= LIMIT
    assert ((bhi - blo) > 0).all()


@pytest.mark.parametrize("name", list(SHAPES))
def test_the_same_shapes_without_bounds_cover_with_the_tail_guarded_asymptotic_cs(name):
    """Without bounds only the asymptotic CS, guarded on the tail side, is shown."""
    sampler, mu, _ = SHAPES[name]
    x = sampler(np.random.default_rng(22), (1000, 1000))
    miss, zero = ever_miss(*tail_guarded_cs(x, ALPHA), mu)
    assert miss <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / 1000) and zero == 0.0
