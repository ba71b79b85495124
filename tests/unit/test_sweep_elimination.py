"""Sequential elimination (tui_eval/sweep/elimination.py) on simulated returns of known means: the best is
eliminated at most at the stated rate, the worse ones are eliminated, and near-equal ones are named
indistinguishable. A simulation is the only way to know the true best; the real sweeps are in the integration
tests."""

from __future__ import annotations

import math

import numpy as np

from tui_eval.sweep.elimination import BEST, INDISTINGUISHABLE, Elimination


def race(means, sd=1.0, rounds=400, per_round=10, seed=0, margin=None, alpha=0.05):
    rng = np.random.default_rng(seed)
    names = [f"c{i}" for i in range(len(means))]
    e = Elimination(names, alpha=alpha, margin=margin)
    next_seed = 0
    for _ in range(rounds):
        seeds = range(next_seed, next_seed + per_round)
        next_seed += per_round
        for arm in e.alive():
            mu = means[names.index(arm.name)]
            for s in seeds:
                e.record(arm.name, s, float(rng.normal(mu, sd)), True)
        e.step()
        if e.outcome is not None:
            break
    return e


def test_the_best_is_eliminated_at_most_at_the_stated_rate():
    runs, alpha = 120, 0.05
    lost = sum(not race([1.0, 0.9, 0.9, 0.7], seed=k, rounds=60).arms["c0"].alive for k in range(runs))
    assert lost / runs <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs), lost


def test_clearly_worse_checkpoints_are_eliminated_and_the_best_named():
    e = race([0.0, 1.0, 0.2, -0.5], seed=3)
    assert e.outcome == BEST and [a.name for a in e.alive()] == ["c1"]
    assert e.ranking()[0].name == "c1"
    assert all(a.eliminated_by is not None for a in e.arms.values() if a.name != "c1")


def test_checkpoints_within_the_margin_are_named_indistinguishable():
    e = race([1.0, 1.0, -1.0], seed=5, margin=0.5)
    assert e.outcome == INDISTINGUISHABLE and {a.name for a in e.alive()} == {"c0", "c1"}
    assert not e.arms["c2"].alive


def test_invalid_episodes_are_counted_never_paired_and_never_a_success():
    e = Elimination(["a", "b"])
    e.record("a", 1, 5.0, True, True)
    e.record("b", 1, float("nan"), True, True)
    e.record("b", 2, 1.0, False, True)
    assert e.arms["b"].invalid == 2 and e.arms["b"].episodes == 2 and e.interval("a", "b")[1] == 0
    assert e.arms["a"].success_rate == 1.0 and e.arms["b"].success_rate == 0.0


def test_labels_training_pick_and_rank_correlation():
    """The board's names, training's pick by the kind's rule, and Spearman's correlation (against scipy)."""
    from pathlib import Path

    from scipy.stats import spearmanr

    from tui_eval.integrations.base import Candidate
    from tui_eval.sweep.race import Entrant, labels, rank_correlation, training_pick

    paths = [Path("/r/PPO_a/checkpoint_000000"), Path("/r/PPO_b/checkpoint_000000"), Path("/r/PPO_b/checkpoint_000001")]
    assert labels([Candidate(p) for p in paths]) == ["PPO_a/checkpoint_000000", "PPO_b/checkpoint_000000",
                                                     "checkpoint_000001"]
    by_metric = [Entrant(f"c{i}", Candidate(Path(f"c{i}"), i, m, "m", picked_by="metric"), None, "rllib")
                 for i, m in enumerate([1.0, 3.0, 2.0])]
    assert training_pick(by_metric) == ("c1", "highest m")
    newest = [Entrant(f"m{i}", Candidate(Path(f"m{i}"), i, m, "m"), None, "rsl_rl") for i, m in enumerate([5.0, 1.0])]
    assert training_pick(newest) == ("m1", "the newest checkpoint")
    rows = [{"training_metric": t, "iteration": i, "mean": m} for i, (t, m) in enumerate([(1, 10), (2, 30), (3, 20),
                                                                                         (4, 40)])]
    assert rank_correlation(rows) == spearmanr([1, 2, 3, 4], [10, 30, 20, 40]).statistic
