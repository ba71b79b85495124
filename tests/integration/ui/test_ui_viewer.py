"""`tui-eval attach`: the same app read-only over a run log, live or finished (no engine, no policies)."""

from __future__ import annotations

import json

from tests.support.ui import append, plain, synthetic_log, wait_for
from tui_eval.ui.app import EvalApp
from tui_eval.ui.records_export import export_paths
from tui_eval.ui.widgets import ComparisonTable, EpisodeLog, RunHeader, Sparklines, StatusLine, VerdictBar


async def test_viewer_follows_a_growing_log(tmp_path):
    path = tmp_path / "run.sqlite"
    log = synthetic_log(path, n=40)
    app = EvalApp(log_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        source = app.source
        await wait_for(pilot, lambda: source.stats.paths["evaluate"].episodes == 40, what="replay")
        await wait_for(pilot, lambda: app.summaries.get("connectors", {}).get("episodes") == 40, what="table")
        # the header follows the log's state on its own refresh, not with the table's
        await wait_for(pilot, lambda: "RUNNING" in plain(app.query_one(RunHeader)), what="header")
        assert "READ-ONLY" in plain(app.query_one(RunHeader))
        table = plain(app.query_one(ComparisonTable))
        assert "evaluate" in table and "connectors" in table
        assert "×" in table  # invalid episodes counted and marked, not dropped
        assert source.stats.paths["connectors"].invalid == sum(1 for s in range(1000, 1040) if s % 7 == 0)
        assert any(invalid for _, invalid in app.query_one(Sparklines).points["connectors"])
        assert "DIFFER" in plain(app.query_one(VerdictBar))  # connectors is always 3 higher

        # the controls are disabled (dimmed in the footer), with a note
        for key, action in (("p", "toggle_pause"), ("r", "resample"), ("x", "explore")):
            assert app.check_action(action, ()) is None
            await pilot.press(key)
            assert "read-only" in app.query_one(StatusLine).text
            assert len(source.blocks) == 1 and app.engine is None

        # the invalid-only filter keeps invalid episodes in view
        await pilot.press("i")
        rows = app.query_one(EpisodeLog).rows
        assert rows and all(r.invalid for r in rows)
        await pilot.press("i")
        await pilot.press("f")  # first path only
        assert {r.path for r in app.query_one(EpisodeLog).rows} == {"evaluate"}
        await pilot.press("f", "f")

        # the run goes on: a new block, then it finishes
        append(log, range(2000, 2010), block=1)
        await wait_for(pilot, lambda: source.stats.paths["evaluate"].episodes == 50, what="new records")
        assert len(source.blocks) == 2 and source.block_stats.paths["evaluate"].episodes == 10
        log.set_meta(status="finished", finished_at=0)
        await wait_for(pilot, lambda: "DONE" in plain(app.query_one(RunHeader)), what="done")

        # export works on a read-only view too
        await pilot.press("e")
        await wait_for(pilot, lambda: any("exported" in m for m in app.query_one(StatusLine).messages), what="export")
        await pilot.press("q")
    assert app.return_value == 0
    _, json_path = export_paths(path)
    document = json.loads(json_path.read_text())
    assert len(document["episodes"]) == 100
    assert document["comparison"]["verdict"] == "differ"


async def test_viewer_keeps_the_log_view_bounded(tmp_path):
    path = tmp_path / "big.sqlite"
    synthetic_log(path, n=3000, status="finished")
    app = EvalApp(log_path=path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.source.stats.paths["evaluate"].episodes == 3000, what="replay")
        await wait_for(pilot, lambda: app.query_one(EpisodeLog).total > 0, what="log rows")
        log = app.query_one(EpisodeLog)
        assert len(log.rows) <= log.cap
        assert all(len(points) <= points.maxlen for points in app.query_one(Sparklines).points.values())
        # the newest episode is on top
        assert log.rows[-1].seed == 3999 and log.selected().seed == 3999
        await pilot.press("down", "down")
        assert log.selected().seed == 3998
        await pilot.press("q")
