"""Coverage under continuous peeking: the cases users meet, simulated vectorised (runs x looks).

A (1-alpha) confidence sequence must exclude the true mean at ANY look in at most alpha of the runs
("ever-miss"). These functions reproduce, on whole arrays, what `PathStats` and `Comparison` show
after every episode (the tests check the two agree look by look), so the README's table and the
tests measure the code that runs. numpy only; every case is seeded.
"""

from __future__ import annotations

import numpy as np

from .betting import BettingState
from .combine import ASYMPTOTIC_JOINS_AT, ASYMPTOTIC_SHARE, betting_and_asymptotic_cs
from .guards import KISH_PSEUDO_BOUNDED, anytime_share_upper, guarded_asymptotic_cs
from .tail_guard import tail_guarded_cs

__all__ = ["capped_returns", "CASES", "shown_cs", "ever_miss", "combined_ever_miss", "peeking_row", "ab_verdicts",
           "equivalence_shown", "exact_equivalent_shown"]

CAP, P_CAP, LOW = 500.0, 0.98, (10.0, 200.0)
CAPPED_MEAN = P_CAP * CAP + (1 - P_CAP) * sum(LOW) / 2  # 492.1


def capped_returns(rng: np.random.Generator, shape) -> np.ndarray:
    """A trained CartPole policy: 500 (the time limit) on 98% of seeds, else uniform in [10, 200]."""
    return np.where(rng.random(shape) < P_CAP, CAP, rng.uniform(LOW[0], LOW[1], shape))


# name -> (sampler(rng, shape), true mean, return bounds or None)
CASES = {
    "capped CartPole, no bounds": (capped_returns, CAPPED_MEAN, None),
    "capped CartPole, bounds 0:500": (capped_returns, CAPPED_MEAN, (0.0, CAP)),
    "lognormal(0, 1)": (lambda r, s: r.lognormal(0.0, 1.0, s), float(np.exp(0.5)), None),
    "exponential(1)": (lambda r, s: r.exponential(1.0, s), 1.0, None),
    "Gaussian": (lambda r, s: r.normal(0.0, 1.0, s), 0.0, None),
    "t3": (lambda r, s: r.standard_t(3, s), 0.0, None),
    "Beta(2, 5), bounds 0:1": (lambda r, s: r.beta(2.0, 5.0, s), 2.0 / 7.0, (0.0, 1.0)),
}


def shown_cs(x: np.ndarray, bounds, alpha: float = 0.05, burn_in: int = 30):
    """The interval `PathStats` shows at every look: with bounds the hedged betting CS intersected
    with the guarded asymptotic CS (`combine`), else the asymptotic CS guarded on the tail side
    (`tail_guard`); NaN where none is shown."""
    if bounds is not None:
        return betting_and_asymptotic_cs(x, bounds[0], bounds[1], alpha, burn_in)
    return tail_guarded_cs(x, alpha, burn_in=burn_in)


def ever_miss(lo: np.ndarray, hi: np.ndarray, mu: float) -> tuple[float, float]:
    """(share of runs whose shown interval ever excludes mu, share that ever shows zero width)."""
    shown = ~np.isnan(lo)
    miss = shown & ((lo > mu) | (hi < mu))
    zero = shown & (hi - lo <= 0.0)
    return float(miss.any(axis=-1).mean()), float(zero.any(axis=-1).mean())


def combined_ever_miss(x: np.ndarray, lo: float, hi: float, mu: float, alpha: float = 0.05) -> float:
    """Share of runs whose bounded interval (`combine.betting_and_asymptotic_cs`) ever excludes mu,
    counted as "the asymptotic part ever misses or the betting part does" (an upper bound: the shown
    interval misses only if a part does). The betting part never grows, so it ever misses iff it
    misses at the last look: only its final state is computed (fast; no per-look intervals)."""
    span = hi - lo
    bet = BettingState((1.0 - ASYMPTOTIC_SHARE) * alpha, runs=x.shape[0])
    bet.extend((x - lo) / span)
    blo, bhi = bet.interval()
    bet_miss = (lo + span * blo > mu) | (lo + span * bhi < mu)
    alo, ahi = guarded_asymptotic_cs(x, ASYMPTOTIC_SHARE * alpha, burn_in=ASYMPTOTIC_JOINS_AT, kish=KISH_PSEUDO_BOUNDED)
    asym_miss = ((alo > mu) | (ahi < mu)).any(axis=-1)
    return float((bet_miss | asym_miss).mean())


def peeking_row(name: str, runs: int, looks: int, seed: int = 0) -> dict:
    """One row of the coverage table for `CASES[name]` (bounded: `combined_ever_miss`; never zero
    width, shown from look 1, by construction: the betting part spans two grid steps at least)."""
    sampler, mu, bounds = CASES[name]
    x = sampler(np.random.default_rng(seed), (runs, looks))
    if bounds is not None:
        miss = combined_ever_miss(x, bounds[0], bounds[1], mu)
        return {"case": name, "runs": runs, "looks": looks, "ever_miss": miss, "zero_width": 0.0, "first_look": 1}
    lo, hi = shown_cs(x, bounds)
    miss, zero = ever_miss(lo, hi, mu)
    first = int(np.argmax(~np.isnan(lo), axis=-1).min()) + 1
    return {"case": name, "runs": runs, "looks": looks, "ever_miss": miss, "zero_width": zero, "first_look": first}


def ab_verdicts(b: np.ndarray, bounds=None, burn_in: int = 30, alpha: float = 0.05):
    """Path A always 500, path B's returns `b` (runs x looks): what `Comparison` shows at every look,
    ``(lo, hi, margin per run, equivalent, differ)``. The paired CS at alpha/2 (the fixed split), its running
    intersection, the first decided verdict kept (`sticky`); the
    margin as `Comparison`'s default: 5% of the bounds, or frozen at look `burn_in` from 5% of the
    range of both paths' returns so far (NaN: none, when that range is 0)."""
    d = CAP - b
    if bounds is not None:
        span = bounds[1] - bounds[0]
        lo, hi = betting_and_asymptotic_cs(d, -span, span, alpha / 2, burn_in)
        margin = np.full(b.shape[0], 0.05 * span)
        frozen_at = 0
    else:
        lo, hi = tail_guarded_cs(d, alpha / 2, burn_in=burn_in)
        range_ = CAP - np.minimum(b[:, :burn_in].min(axis=-1), CAP)
        margin = np.where(range_ > 0, 0.05 * range_, np.nan)
        frozen_at = burn_in - 1
    lo, hi, contradicted = _running_intersection(lo, hi)
    m = margin[:, None]
    shown = ~np.isnan(lo)
    differ = shown & ((lo > 0) | (hi < 0))
    with np.errstate(invalid="ignore"):
        equivalent = shown & ~differ & (-m < lo) & (hi < m)
    equivalent[:, :frozen_at] = False
    equivalent, differ = _sticky(equivalent, differ, contradicted)
    return lo, hi, margin, equivalent, differ


def _running_intersection(lo, hi):
    """`Comparison`'s running intersection of one sequence look by look (NaN: not shown yet); from the first
    empty one on (a contradiction) the interval as it is, and a mask of those looks (`sticky`)."""
    klo, khi = np.fmax.accumulate(lo, axis=-1), np.fmin.accumulate(hi, axis=-1)
    contradicted = np.logical_or.accumulate(klo > khi, axis=-1)
    return np.where(contradicted, lo, klo), np.where(contradicted, hi, khi), contradicted


def _sticky(equivalent, differ, contradicted):
    """The first decided verdict of each run stands from its look on, undecided once contradicted (`sticky`)."""
    decided = equivalent | differ
    looks = np.arange(decided.shape[-1])
    first = np.where(decided.any(-1), decided.argmax(-1), decided.shape[-1])[:, None]
    was_differ = np.take_along_axis(differ, np.minimum(first, decided.shape[-1] - 1), axis=-1)
    after = (looks >= first) & ~contradicted
    return after & ~was_differ, after & was_differ


def equivalence_shown(runs: int, looks: int, bounds=None, seed: int = 0) -> dict:
    """Path A always 500, path B capped (true A - B = 7.9), default margin: how often "equivalent" is
    ever shown, how often falsely (7.9 >= the margin), zero-width difference intervals, ever-miss of
    the difference, and the share of runs whose verdict at the last look is "differ"."""
    b = capped_returns(np.random.default_rng(seed), (runs, looks))
    lo, hi, margin, equivalent, differ = ab_verdicts(b, bounds)
    true_diff = CAP - CAPPED_MEAN
    with np.errstate(invalid="ignore"):
        false_eq = equivalent & (true_diff >= margin[:, None])
    miss, zero = ever_miss(lo, hi, true_diff)
    return {"equivalent": float(equivalent.any(-1).mean()), "false_equivalent": float(false_eq.any(-1).mean()),
            "zero_width": zero, "ever_miss": miss, "final_differ": float(differ[:, -1].mean()),
            "runs": runs, "looks": looks}


def exact_equivalent_shown(runs: int, looks: int, p_differ: float = 0.1, seed: int = 0, alpha: float = 0.05,
                           could_differ_max: float = 0.05) -> float:
    """Both paths deterministic, B differs from A on `p_differ` of seeds: the share of runs that ever
    show "equivalent (exact)", i.e. reach n identical seeds with the anytime bound <= `could_differ_max`
    before their first differing seed (after which the verdict is "differ" for good)."""
    need = next(n for n in range(1, 100_000) if anytime_share_upper(0, n, alpha) <= could_differ_max)
    differs = np.random.default_rng(seed).random((runs, looks)) < p_differ
    first = np.where(differs.any(-1), differs.argmax(-1), looks)  # identical seeds before the first differing one
    return float((first >= need).mean())
