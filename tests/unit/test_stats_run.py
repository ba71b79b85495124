"""A run's statistics kept apart per (path, explore): labels that never lie, pairings compared apart."""

from __future__ import annotations

import json

import pytest

from tui_eval.records import EpisodeRecord
from tui_eval.stats import Comparison, RunStats
from tui_eval.views.format import comparison_reason
from tui_eval.views.summary import build_summary, replay

META = {"paths": ["evaluate", "connectors"], "explore": {"evaluate": True, "connectors": False},
        "spec": {"return_bounds": None, "equivalence_margin": None}}


def rec(path, seed, ret, block=0, explore=None, **kw):
    return EpisodeRecord(path, seed, float(ret), 10, block=block, explore=explore, **kw)


def records_with_explore_change():
    """evaluate sampled (explore on) on block 0, then greedy (off) on block 1; connectors off throughout."""
    out = []
    for seed in range(40):  # block 0: sampled evaluate is worse and noisy
        out.append(rec("evaluate", seed, 100.0 + seed % 5, explore=True))
        out.append(rec("connectors", seed, 200.0, explore=False))
    for seed in range(40, 50):  # block 1: both greedy, identical
        out.append(rec("evaluate", seed, 200.0, block=1, explore=False))
        out.append(rec("connectors", seed, 200.0, block=1, explore=False))
    return out


def test_a_path_that_changed_explore_has_no_pooled_statistics_and_per_setting_ones():
    stats = RunStats(["evaluate", "connectors"], deterministic=False, return_bounds=None, margin=None)
    for r in records_with_explore_change():
        stats.add(r)
    s = stats.paths["evaluate"].summary()
    assert s["explore"] is None and s["mean"] is None and s["cs95"] is None and s["episodes"] == 50
    assert s["by_explore"]["on"]["episodes"] == 40 and s["by_explore"]["on"]["explore"] is True
    assert s["by_explore"]["on"]["mean"] == pytest.approx(102.0)
    assert s["by_explore"]["off"]["episodes"] == 10 and s["by_explore"]["off"]["mean"] == 200.0
    one = stats.paths["connectors"].summary()
    assert one["explore"] is False and one["mean"] == 200.0 and "by_explore" not in one
    assert stats.paths["evaluate"].episodes == 50 and stats.paths["evaluate"].n == 50  # counts: the whole path


def test_each_pairing_of_settings_is_compared_apart_and_the_newest_is_shown():
    stats = RunStats(["evaluate", "connectors"], deterministic=False, return_bounds=None, margin=None)
    for r in records_with_explore_change():
        stats.add(r)
    c = stats.comparison_summary()
    assert c.explore == (False, False) and c.exact is True  # both off: per-seed, exact mode
    assert c.identical_pairs == 10 and c.paired == 10 and c.verdict == "undecided"
    assert "identical on 10/10 seeds" in comparison_reason(c)
    pairings = {tuple(s.explore): s for s in stats.comparisons_by_explore()}
    assert set(pairings) == {(True, False), (False, False)}
    assert pairings[(True, False)].paired == 40 and pairings[(True, False)].exact is False
    assert pairings[(True, False)].diff_mean == pytest.approx(-98.0)


def test_records_wait_for_the_other_paths_setting_in_their_block():
    stats = RunStats(["A", "B"], deterministic=False, return_bounds=None, margin=None)
    for seed in range(5):
        stats.add(rec("A", seed, 1.0, block=2, explore=True))
    assert stats.held == 5 and stats.comparison_summary().matched == 0
    stats.add(rec("B", 0, 1.0, block=2, explore=False))
    c = stats.comparison_summary()
    assert stats.held == 0 and c.matched == 1 and c.unmatched_a == 4 and c.explore == (True, False)


def test_the_json_summary_keeps_the_public_shape_and_adds_per_setting_entries():
    records = records_with_explore_change()
    document = build_summary(META, replay(META, records), records)
    json.dumps(document, allow_nan=False)
    evaluate, connectors = document["paths"]["evaluate"], document["paths"]["connectors"]
    assert connectors["explore"] is False and connectors["mean"] == 200.0 and "by_explore" not in connectors
    assert evaluate["explore"] is None and evaluate["mean"] is None
    assert evaluate["by_explore"]["on"]["explore"] is True and evaluate["by_explore"]["on"]["episodes"] == 40
    assert evaluate["by_explore"]["off"]["explore"] is False
    assert document["comparison"]["explore"] == [False, False]
    assert len(document["comparisons_by_explore"]) == 2
    # one setting per path (the common case): the docs/contract.md shape, explore from the records
    same = [r for r in records if r.block == 0]
    document = build_summary(META, replay(META, same), same)
    assert document["paths"]["evaluate"]["explore"] is True and "comparisons_by_explore" not in document
    assert document["paths"]["evaluate"]["mean"] == pytest.approx(102.0)


def test_records_without_a_setting_join_the_latest_known_one():
    stats = RunStats(["A", "B"], deterministic=True, return_bounds=None, margin=None)
    stats.add(rec("A", 0, 1.0))  # no setting yet: relabelled by the first known one
    stats.add(rec("A", 1, 2.0, explore=False))
    stats.add(rec("A", 2, 3.0, invalid=True))
    s = stats.paths["A"].summary()
    assert s["explore"] is False and s["episodes"] == 3 and s["invalid"] == 1 and "by_explore" not in s


def test_bounds_and_margin_reach_paths_and_comparison():
    stats = RunStats(["A", "B"], deterministic=False, return_bounds=(0.0, 500.0, "CartPole-v1: +1 x 500"),
                     margin=None)
    stats.add(rec("A", 0, 500.0, explore=True))
    stats.add(rec("B", 0, 480.0, explore=True))
    s = stats.paths["A"].summary()
    assert s["return_bounds"] == [0.0, 500.0] and s["bounds_source"] == "CartPole-v1: +1 x 500"
    assert s["cs95"] is not None and "hedged betting" in s["cs_method"]  # from the first episode
    c = stats.comparison_summary()
    assert c.margin == 25.0 and c.diff_cs95 is not None and c.method == "paired"


def test_tables_label_rows_with_the_setting_their_episodes_ran_with():
    from tui_eval.ui.widgets.comparison_table import TableData, explore_cell, path_rows
    from tui_eval.views.format import summary_table, verdict_line

    records = records_with_explore_change()
    document = build_summary(META, replay(META, records), records)
    text = summary_table(document)
    assert "evaluate [explore on]" in text and "evaluate [explore off]" in text
    # deterministic paths that gave the same episode on every paired seed: said first, in plain words
    assert "verdict: IDENTICAL on 10/10 seeds — evaluate vs connectors, both deterministic; statistically " \
           "UNDECIDED: ≤ 37.7% of seeds could differ (anytime 95%)" in text
    assert document["comparison"]["per_seed"] == "identical" and document["comparison"]["verdict"] == "undecided"
    stats = replay(META, records)
    data = TableData(paths=["evaluate", "connectors"], explore={"evaluate": False, "connectors": True})
    rows = path_rows("evaluate", stats.paths["evaluate"].summary(), data)
    assert [(str(r["path"]), r["explore"]) for r in rows] == [("evaluate·on", "on"), ("evaluate·off", "off")]
    # one setting, a change asked for but not applied yet: the row says both, never only the new one
    assert explore_cell(stats.paths["connectors"].summary(), True) == "off→on"
    assert explore_cell({"episodes": 0, "explore": None}, True) == "on"
    differ = Comparison("A", "B", deterministic=True)
    for seed, ret_b in ((1, 1.0), (2, 1.0), (3, 2.0)):
        differ.add(rec("A", seed, 1.0))
        differ.add(rec("B", seed, ret_b))
    line = verdict_line(differ.summary())
    assert line.startswith("verdict: DIFFER (exact)") and "seed 3: A 1.0 vs B 2.0 with both deterministic" in line
