"""How soon the live statistics answer: pairs until a correct `differ` against a fixed-n t-test,
anytime/fixed-n width ratios, and the per-episode cost of the hedged betting sequence.

Used by `python bench/bench_stats.py --power`. Every number is what `Comparison` / `PathStats` show
(the vectorised forms of `tui_eval.stats.coverage` and `combine`, checked look by look against them
in tests/unit/test_stats_peeking.py): the paired difference's anytime interval at alpha/2 (the fixed
split with the success metric), a look after every pair.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats

from tui_eval.stats import tail_guarded_cs
from tui_eval.stats.betting import BettingState
from tui_eval.stats.combine import betting_and_asymptotic_cs
from tui_eval.stats.coverage import capped_returns

GOAL_FACTOR, GOAL_FLOOR = 2.5, 30
GOAL_COST_US = 5.0
PENDULUM = (-3254.7, 0.0)


def fixed_n(delta: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Smallest n at which a two-sided paired t-test at `alpha` has `power` for a mean difference
    `delta` with sd `sd` (noncentral t; Cohen 1988)."""
    for n in range(2, 100_000):
        crit = stats.t.ppf(1 - alpha / 2, n - 1)
        nc = delta / sd * math.sqrt(n)
        if stats.nct.sf(crit, n - 1, nc) + stats.nct.cdf(-crit, n - 1, nc) >= power:
            return n
    raise ValueError("no n below 100,000")


def _pendulum_pair(delta):
    def sample(rng, shape):
        a = rng.normal(-1100.0, 220.0, shape)
        b = -1100.0 + 0.8 * (a + 1100.0) + 220.0 * 0.6 * rng.normal(0.0, 1.0, shape) - delta
        return np.clip(a, *PENDULUM), np.clip(b, *PENDULUM)
    return sample


def _capped_pair(p_a, p_b, low=(50.0, 400.0)):
    def sample(rng, shape):
        def one(p):
            return np.where(rng.random(shape) < p, 500.0, rng.uniform(low[0], low[1], shape))
        return one(p_a), one(p_b)
    return sample


def _shifted(draw, delta):
    def sample(rng, shape):
        return draw(rng, shape) + delta, draw(rng, shape)
    return sample


def _tail_toward_zero_pair(rng, shape):
    """A capped at 500 w.p. 0.95, else U(50, 400); B near 480: A - B = 6.25 > 0, its long tail below 0."""
    return _capped_pair(0.95, 0.95)(rng, shape)[0], rng.normal(480.0, 5.0, shape)


def _bernoulli_pair(rng, shape):
    return (rng.random(shape) < 0.2) * 1.0, (rng.random(shape) < 0.1) * 1.0


def _beta_pair(rng, shape):
    return rng.beta(2.6, 5.0, shape), rng.beta(2.0, 5.0, shape)


def shapes() -> dict:
    """name -> (sampler of (a, b), true mean difference, sd of the difference, bounds of a return)."""
    var_capped = lambda p: p * (1 - p) * (500 - 225) ** 2 + (1 - p) * 350**2 / 12  # noqa: E731
    cap98 = lambda p: p * (1 - p) * (500 - 105) ** 2 + (1 - p) * 190**2 / 12  # noqa: E731
    sd_t3, sd_ln = math.sqrt(3.0), math.sqrt((math.e - 1) * math.e)
    beta_var = lambda a, b: a * b / ((a + b) ** 2 * (a + b + 1))  # noqa: E731
    out = {}
    for delta in (50.0, 100.0):
        for bounds in (PENDULUM, None):
            label = "bounds [-3254.7, 0]" if bounds else "no bounds"
            out[f"Pendulum-like, diff {delta:g}, {label}"] = (_pendulum_pair(delta), delta, 139.1, bounds)
    for bounds in ((0.0, 500.0), None):
        out[f"capped 500 w.p. 0.9 vs 0.8, {'bounds 0:500' if bounds else 'no bounds'}"] = (
            _capped_pair(0.9, 0.8), 27.5, math.sqrt(var_capped(0.9) + var_capped(0.8)), bounds)
        out[f"capped CartPole 0.98 vs 0.9, {'bounds 0:500' if bounds else 'no bounds'}"] = (
            _capped_pair(0.98, 0.9, (10.0, 200.0)), 0.08 * 395, math.sqrt(cap98(0.98) + cap98(0.9)), bounds)
    # the unbounded shapes of tests/unit/test_stats_peeking.py, B shifted so that the fixed-n n is about 100
    for name, draw, sd in (("Gaussian", lambda r, s: r.normal(0.0, 1.0, s), 1.0),
                           ("t3", lambda r, s: r.standard_t(3, s), sd_t3),
                           ("lognormal(0, 1)", lambda r, s: r.lognormal(0.0, 1.0, s), sd_ln),
                           ("exponential(1)", lambda r, s: r.exponential(1.0, s), 1.0)):
        delta = 0.4 * sd
        out[f"{name} + {delta:.2f} vs {name}, no bounds"] = (_shifted(draw, delta), delta, sd * math.sqrt(2), None)
    for bounds in ((0.0, 1.0), None):
        out[f"Bernoulli(0.2) vs Bernoulli(0.1), {'bounds 0:1' if bounds else 'no bounds'}"] = (
            _bernoulli_pair, 0.1, math.sqrt(0.2 * 0.8 + 0.1 * 0.9), bounds)
    # not a goal shape: the long tail of the difference points toward 0, so the side the tail-side guard
    # widens is the deciding one (README, statistics)
    out["A capped 0.95 vs B N(480, 5), no bounds (long tail toward 0)"] = (
        _tail_toward_zero_pair, 6.25, math.sqrt(var_capped(0.95) + 25.0), None)
    sd_beta = math.sqrt(beta_var(2.6, 5.0) + beta_var(2.0, 5.0))
    out["Beta(2.6, 5) vs Beta(2, 5), bounds 0:1"] = (_beta_pair, 2.6 / 7.6 - 2 / 7, sd_beta, (0.0, 1.0))
    return out


def difference_cs(d: np.ndarray, bounds):
    """What `Comparison` shows for the paired difference at every look (alpha/2 = 0.025)."""
    if bounds is None:
        return tail_guarded_cs(d, 0.025)
    span = bounds[1] - bounds[0]
    return betting_and_asymptotic_cs(d, -span, span, 0.025)


def pairs_until_differ(name: str, runs: int = 300, seed: int = 0) -> dict:
    """80th percentile of the first look with a correct `differ` (lo > 0), vs the fixed-n n."""
    sample, delta, sd, bounds = shapes()[name]
    n_fixed = fixed_n(delta, sd)
    goal = GOAL_FACTOR * max(n_fixed, GOAL_FLOOR)
    looks = int(min(4000, 2 * goal))
    a, b = sample(np.random.default_rng(seed), (runs, looks))
    lo, hi = difference_cs(a - b, bounds)
    with np.errstate(invalid="ignore"):
        right, wrong = lo > 0, hi < 0
    first = np.where(right.any(1), right.argmax(1) + 1, 10**9)
    p80 = float(np.percentile(first, 80))
    return {"name": name, "fixed_n": n_fixed, "p80": p80, "ratio": p80 / max(n_fixed, GOAL_FLOOR),
            "wrong": float(wrong.any(1).mean()), "goal": goal, "looks": looks}


def width_ratios(draw, bounds, ns=(100, 300, 1000), runs: int = 200, seed: int = 1) -> dict:
    """One path: mean width of the shown anytime interval over that of the fixed-n t interval, at n
    (over the runs that show an interval: none while all returns are identical, without bounds)."""
    x = draw(np.random.default_rng(seed), (runs, max(ns)))
    if bounds is None:
        lo, hi = tail_guarded_cs(x, 0.05)
    else:
        lo, hi = betting_and_asymptotic_cs(x, bounds[0], bounds[1], 0.05)
    out = {}
    for n in ns:
        sd = x[:, :n].std(axis=1, ddof=1)
        t_width = 2 * stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
        shown = ~np.isnan(lo[:, n - 1])
        out[n] = float(np.mean((hi - lo)[shown, n - 1]) / np.mean(t_width[shown]))
    return out


WIDTH_SHAPES = {
    "Pendulum-like N(-1100, 220)": (lambda r, s: np.clip(r.normal(-1100, 220, s), *PENDULUM), PENDULUM),
    "capped 500 w.p. 0.9 else U(50, 400)": (lambda r, s: _capped_pair(0.9, 0.9)(r, s)[0], (0.0, 500.0)),
    "capped CartPole (0.98)": (capped_returns, (0.0, 500.0)),
    "Beta(2, 5)": (lambda r, s: r.beta(2.0, 5.0, s), (0.0, 1.0)),
    "Bernoulli(0.1)": (lambda r, s: (r.random(s) < 0.1) * 1.0, (0.0, 1.0)),
    "Gaussian": (lambda r, s: r.normal(0.0, 1.0, s), None),
    "t3": (lambda r, s: r.standard_t(3, s), None),
    "lognormal(0, 1)": (lambda r, s: r.lognormal(0.0, 1.0, s), None),
    "exponential(1)": (lambda r, s: r.exponential(1.0, s), None),
}


def betting_cost_us(values: np.ndarray, lo: float, hi: float, batch: int = 4096) -> float:
    """CPU microseconds per value of `BettingState.extend` fed as `PathStats` feeds it (batches)."""
    state = BettingState(0.005)
    y = (values - lo) / (hi - lo)
    t0 = time.process_time()
    for i in range(0, y.size, batch):
        state.extend(y[i : i + batch][None, :])
    return (time.process_time() - t0) / y.size * 1e6


def hot_path_us(bounds, pairs: int = 100_000, seed: int = 3) -> float:
    """CPU microseconds per episode of `RunStats.add` for A and B on the same seeds, Pendulum-like
    returns (records built outside the timed region)."""
    from tui_eval.records import EpisodeRecord
    from tui_eval.stats import RunStats

    a, b = _pendulum_pair(50.0)(np.random.default_rng(seed), pairs)
    records = [EpisodeRecord(p, i, float(r), 200) for i in range(pairs) for p, r in (("A", a[i]), ("B", b[i]))]
    run = RunStats(["A", "B"], False, bounds, None)
    add = run.add
    t0 = time.process_time()
    for r in records:
        add(r)
    run.comparison_summary()  # the betting state catches up on the buffered values here
    return (time.process_time() - t0) / len(records) * 1e6


def print_power_table(runs: int = 300) -> None:
    print("| shape | fixed-n n (paired t, 80% power) | pairs until `differ`, 80th pct | ratio to max(n, 30) "
          "(goal <= 2.5) | wrong `differ` |")
    print("|---|---|---|---|---|")
    for name in shapes():
        r = pairs_until_differ(name, runs)
        p80 = f"{r['p80']:.0f}" if r["p80"] < 10**8 else f"> {r['looks']}"
        ok = "OK" if r["ratio"] <= GOAL_FACTOR else "OVER"
        print(f"| {name} | {r['fixed_n']} | {p80} | {r['ratio']:.2f} {ok} | {r['wrong']:.1%} |")
    print("\n| one path | bounds | anytime / fixed-n width at n = 100 | 300 | 1,000 |")
    print("|---|---|---|---|---|")
    for name, (draw, bounds) in WIDTH_SHAPES.items():
        for b in ((bounds, None) if bounds is not None else (None,)):
            w = width_ratios(draw, b)
            label = f"[{b[0]:g}, {b[1]:g}]" if b else "none"
            print(f"| {name} | {label} | {w[100]:.2f} | {w[300]:.2f} | {w[1000]:.2f} |")
    print(f"\nRunStats.add (PathStats.add + Comparison.add, as the engine calls it), per episode: "
          f"{hot_path_us(None):.2f} µs without bounds, {hot_path_us(PENDULUM):.2f} µs with the Pendulum bounds "
          f"(target <= {GOAL_COST_US:g} µs)")
    rng = np.random.default_rng(2)
    n = 1_000_000
    capped = capped_returns(rng, n)
    pend = np.clip(rng.normal(-1100, 220, n), *PENDULUM)
    print(f"\nhedged betting sequence, per value over {n:,} values (batches of 4096, as PathStats feeds it): "
          f"capped CartPole in [0, 500] {betting_cost_us(capped, 0, 500):.2f} µs, "
          f"Pendulum-like in [-3254.7, 0] {betting_cost_us(pend, *PENDULUM):.2f} µs; "
          f"first 1,000 values only: {betting_cost_us(capped[:1000], 0, 500):.1f} µs")
