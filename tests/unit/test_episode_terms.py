"""Termination and reward terms of episodes: counted, averaged, compared, kept in the log, shown."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from tui_eval.log.store import RunLog
from tui_eval.records import EpisodeRecord
from tui_eval.stats.episode_terms import TermTally, term_differences
from tui_eval.views.format import ended_by, summary_table


def record(path: str, seed: int, term: str | None, terms: dict[str, float], invalid: bool = False) -> EpisodeRecord:
    return EpisodeRecord(path=path, seed=seed, ret=sum(terms.values()), length=10, invalid=invalid,
                         termination=term, reward_terms=tuple(terms.items()))


def test_a_tally_counts_terminations_and_averages_each_reward_term():
    rng = np.random.default_rng(0)
    tally = TermTally()
    track = rng.normal(5.0, 1.0, 200)
    penalty = rng.normal(-0.5, 0.1, 200)
    for i in range(200):
        tally.add(record("a", i, "time_out" if i % 4 else "fell_over", {"track": track[i], "penalty": penalty[i]}))
    tally.add(record("a", 999, "nan_term", {"track": float("nan"), "penalty": 1e9}, invalid=True))
    out = tally.summary()
    assert out["terminations"] == {"time_out": 150, "fell_over": 50, "nan_term": 1}
    assert list(out["terminations"]) == ["time_out", "fell_over", "nan_term"]  # most common first
    assert out["reward_terms"]["track"]["mean"] == pytest.approx(track.mean())
    assert out["reward_terms"]["penalty"]["std"] == pytest.approx(penalty.std(ddof=1))
    assert out["reward_terms"]["track"]["n"] == 200  # the invalid world's terms are not the policy's
    assert TermTally().summary() == {}


def test_differences_are_paired_by_seed_and_put_the_term_that_moved_first():
    rng = np.random.default_rng(1)
    base = rng.normal(1.0, 0.5, 80)  # seed to seed, much more spread than the difference between the paths
    moved = base + 0.1 + rng.normal(0, 0.02, 80)
    records = []
    for i in range(80):
        records.append(record("a", i, "time_out", {"steady": 2.0 + 0.01 * (i % 3), "moved": base[i]}))
        records.append(record("b", i, "time_out", {"steady": 2.0 + 0.01 * (i % 3), "moved": moved[i]}))
    records.append(record("b", 500, "time_out", {"steady": 9.0, "moved": 9.0}))  # no pair: left out
    records.append(record("a", 7, "nan_term", {"steady": 1e9, "moved": 1e9}, invalid=True))  # a duplicate, invalid
    pairs, rows = term_differences(records, "a", "b")
    assert pairs == 80
    assert [r.term for r in rows] == ["moved", "steady"]
    first = rows[0]
    assert first.diff == pytest.approx((moved - base).mean())
    expected = sps.ttest_rel(moved, base).confidence_interval(0.95)
    assert first.ci == pytest.approx((expected.low, expected.high))
    assert first.ci[0] > 0  # paired, a 0.1 shift shows through a seed-to-seed spread of 0.5
    assert rows[1].diff == 0.0
    assert term_differences([], "a", "b") == (0, [])


def test_ended_by_and_the_headless_table():
    assert ended_by({"time_out": 81, "fell_over": 19}) == "time_out 81% · fell_over 19%"
    assert ended_by({"a": 5, "b": 3, "c": 2}) == "a 50% · b 30% · +1 more"
    assert ended_by(None) == "—"
    base = {"episodes": 4, "explore": False, "mean": 1.0, "ci95": None, "cs95": None, "iqm": None,
            "success_rate": None, "success_ci95": None, "invalid": 0, "mean_length": 10.0, "episodes_per_s": None,
            "env_steps_per_s": None, "cs_method": None}
    plain = summary_table({"paths": {"a": dict(base), "b": dict(base)}, "comparison": None})
    assert "ended by" not in plain and "reward terms" not in plain
    terms = {"terminations": {"time_out": 3, "fell_over": 1},
             "reward_terms": {"track": {"mean": 1.0, "std": 0.1, "n": 4}}}
    paired = {"a": "a", "b": "b", "pairs": 4,
              "terms": [{"term": "track", "mean_a": 1.0, "mean_b": 1.5, "diff": 0.5, "ci95": [0.25, 0.75]}]}
    named = summary_table({"paths": {"a": {**base, **terms}, "b": {**base, **terms}}, "comparison": None,
                           "reward_terms": paired})
    assert "ended by" in named and "time_out 75% · fell_over 25%" in named
    assert "reward terms (episode sums on 4 paired seeds" in named and "[0.250, 0.750]" in named


def test_the_log_keeps_both_and_reads_older_logs_without_them(tmp_path):
    log = RunLog(tmp_path / "run.sqlite")
    log.append(record("a", 1, "fell_over", {"track": 1.5, "penalty": -0.25}))
    log.append(EpisodeRecord(path="a", seed=2, ret=1.0, length=3))
    log.close()
    first, second = RunLog(tmp_path / "run.sqlite", readonly=True).records()
    assert first.termination == "fell_over" and first.reward_terms == (("track", 1.5), ("penalty", -0.25))
    assert second.termination is None and second.reward_terms == ()
    assert first.to_json()["reward_terms"] == {"track": 1.5, "penalty": -0.25}
    assert "termination" not in second.to_json()
