"""Episodes spent to name the best of 8 checkpoints: sequential elimination vs uniform allocation.

Simulated returns of known means and spreads (the only way to know the true best). Both use the same paired
anytime-valid intervals at the same alpha (tui_eval/sweep/elimination.py), so they hold the same error rate:
elimination stops giving episodes to a checkpoint once it is proven worse; uniform allocation gives every
checkpoint the same number of episodes until the best is proven better than every other. Target: <= 0.5x.

    python bench/bench_sweep.py
"""

from __future__ import annotations

import numpy as np

from tui_eval.sweep.elimination import BEST, Elimination

MEANS = [1.0, 0.75, 0.6, 0.5, 0.4, 0.3, 0.2, 0.0]
SPREADS = [1.0, 1.2, 0.8, 1.0, 1.5, 1.0, 0.9, 1.1]
ROUND = 10
RUNS = 10


def play(rng: np.random.Generator, n_seeds: int) -> np.ndarray:
    """Returns of every checkpoint on `n_seeds` shared seeds (a seed's noise shared in part, as envs do)."""
    common = rng.normal(0, 0.5, n_seeds)
    return np.array([m + common + rng.normal(0, s, n_seeds) for m, s in zip(MEANS, SPREADS)])


def eliminating(returns: np.ndarray) -> tuple[int, bool]:
    names = [f"c{i}" for i in range(len(MEANS))]
    e = Elimination(names)
    for start in range(0, returns.shape[1], ROUND):
        for arm in e.alive():
            i = names.index(arm.name)
            for s in range(start, start + ROUND):
                e.record(arm.name, s, float(returns[i, s]), True)
        e.step()
        if e.outcome == BEST:
            return e.spent(), e.alive()[0].name == "c0"
    raise RuntimeError("budget too small")


def uniform(returns: np.ndarray) -> tuple[int, bool]:
    names = [f"c{i}" for i in range(len(MEANS))]
    e = Elimination(names)
    for start in range(0, returns.shape[1], ROUND):
        for i, name in enumerate(names):
            for s in range(start, start + ROUND):
                e.record(name, s, float(returns[i, s]), True)
        leader = max(names, key=lambda n: e.arms[n].mean or -np.inf)
        ivs = [e.interval(leader, other)[0] for other in names if other != leader]
        if all(iv is not None and iv[0] > 0 for iv in ivs):
            return e.spent(), leader == "c0"
    raise RuntimeError("budget too small")


def main() -> None:
    ratios = []
    for k in range(RUNS):
        returns = play(np.random.default_rng(k), 20_000)
        spent_e, right_e = eliminating(returns)
        spent_u, right_u = uniform(returns)
        ratios.append(spent_e / spent_u)
        print(f"run {k}: elimination {spent_e} episodes ({'right' if right_e else 'WRONG'}), uniform {spent_u} "
              f"({'right' if right_u else 'WRONG'}): {spent_e / spent_u:.2f}x")
    print(f"elimination / uniform, mean of {RUNS}: {np.mean(ratios):.2f}x (target <= 0.5x)")


if __name__ == "__main__":
    main()
