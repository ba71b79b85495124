"""A path given up voids the comparison: from events, from the log's path_errors, in the summary and table."""

from __future__ import annotations

from tui_eval.engine.void import void_reason
from tui_eval.records import EpisodeRecord, PathFailed
from tui_eval.stats import RunStats
from tui_eval.views.format import summary_table
from tui_eval.views.summary import build_summary


def test_only_a_path_given_up_voids_the_comparison():
    assert void_reason([PathFailed("connectors", "RuntimeError: boom", restarts=1, gave_up=False)]) is None
    reason = void_reason([PathFailed("connectors", "RuntimeError: boom", restarts=4, gave_up=True),
                          {"path": "evaluate", "message": "ValueError: x", "gave_up": True}])
    assert reason is not None
    assert "path connectors failed and was given up (RuntimeError: boom)" in reason and "path evaluate" in reason


def _stats_with_identical_episodes() -> tuple[RunStats, list[EpisodeRecord]]:
    stats = RunStats(["evaluate", "connectors"], deterministic=True, return_bounds=(0.0, 500.0), margin=None)
    records = [EpisodeRecord(path=p, seed=s, ret=float(10 + s), length=10 + s, explore=False)
               for s in range(5) for p in ("evaluate", "connectors")]
    for rec in records:
        stats.add(rec)
    return stats, records


def test_the_summary_and_table_say_void_instead_of_the_verdict_the_episodes_would_give():
    stats, records = _stats_with_identical_episodes()
    meta = {"paths": ["evaluate", "connectors"], "explore": {"evaluate": False, "connectors": False}}
    valid = build_summary(meta, stats, records)
    assert valid["comparison"]["exact"] is True  # identical seed by seed: a verdict, without a failure
    failed = build_summary({**meta, "path_errors": [{"path": "connectors", "message": "boom", "gave_up": True}]},
                           stats, records)
    comparison = failed["comparison"]
    assert comparison["verdict"] == "void" and comparison["exact"] is None and comparison["diff_mean"] is None
    assert comparison["paired"] == 5 and "connectors failed and was given up (boom)" in comparison["void"]
    table = summary_table(failed)
    assert "verdict: VOID" in table and "identical" not in table.lower()
