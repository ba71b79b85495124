"""The app as a view over snapshots (Pilot, headless driver) on a scripted source (tests/support/fake_source.py,
a fake: no engine, no log): the layout at both sizes, what the header and the verdict bar say in each state,
and the source control each key calls."""

from __future__ import annotations

import pytest

from tests.support.fake_source import FakeSource
from tests.support.ui import plain, wait_for
from tui_eval.config.spec import SeedBlock
from tui_eval.records import EpisodeRecord
from tui_eval.stats import RunStats
from tui_eval.ui.app import EvalApp
from tui_eval.ui.widgets import ComparisonTable, Histograms, RunHeader, StatusLine, VerdictBar
from tui_eval.views.snapshot import RunSnapshot

PATHS = ("evaluate", "connectors")


def _records(n: int, gap: float) -> list[EpisodeRecord]:
    """`n` seeds on both paths; connectors returns `gap` more on every seed."""
    return [EpisodeRecord(path=name, seed=seed, ret=float(100 + seed % 13 + gap * i), length=100, explore=False)
            for seed in range(1000, 1000 + n) for i, name in enumerate(PATHS)]


def _snapshot(state: str, records: list[EpisodeRecord]) -> RunSnapshot:
    stats = RunStats(list(PATHS), True, None, None)
    for rec in records:
        stats.add(rec)
    return RunSnapshot(paths=PATHS, state=state, summaries={n: s.summary() for n, s in stats.paths.items()},
                       comparison=stats.comparison_summary(), returns={n: s.returns_snapshot()
                                                                       for n, s in stats.paths.items()},
                       blocks=(SeedBlock(1000, None),), explore=dict.fromkeys(PATHS, False),
                       throughput=dict.fromkeys(PATHS, (20.0, 2000.0)),
                       done={n: s.episodes for n, s in stats.paths.items()}, elapsed=5.0)


def _app(tmp_path, script: list[RunSnapshot], records=()) -> tuple[EvalApp, list[FakeSource]]:
    made: list[FakeSource] = []

    def make(inbox):
        made.append(FakeSource(inbox, script, tmp_path / "run.sqlite", records=list(records)))
        return made[0]

    return EvalApp(make_source=make, refresh_hz=20, stats_interval=0.1), made


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_panel_is_laid_out_and_the_table_fits_at_both_sizes(tmp_path, size):
    records = _records(40, gap=3.0)
    app, _ = _app(tmp_path, [_snapshot("running", records)], records)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.summaries.get("connectors", {}).get("episodes") == 40, what="table")
        widget = app.query_one(ComparisonTable)
        table = plain(widget)
        assert "evaluate" in table and "connectors" in table
        assert max(len(line.rstrip()) for line in table.splitlines()) <= widget.size.width
        assert ("mean len" in table) == (size[0] >= 110)  # narrow: fewer columns
        assert app.query_one(Histograms).display == (size[1] >= 32)
        assert "RUNNING" in plain(app.query_one(RunHeader))
        assert "DIFFER" in plain(app.query_one(VerdictBar))  # connectors is 3 higher on every seed
        await pilot.press("q")
    assert app.return_value == 0


async def test_keys_call_the_sources_controls_and_the_header_follows(tmp_path):
    records = _records(20, gap=0.0)
    app, made = _app(tmp_path, [_snapshot("running", records), _snapshot("done", records)], records)
    async with app.run_test(size=(120, 40)) as pilot:
        header = app.query_one(RunHeader)
        await wait_for(pilot, lambda: "RUNNING" in plain(header), what="running")
        source = made[0]
        await pilot.press("p")
        await wait_for(pilot, lambda: "PAUSED" in plain(header), what="paused")
        await pilot.press("space")
        await wait_for(pilot, lambda: "RUNNING" in plain(header), what="running again")
        await pilot.press("r")
        await wait_for(pilot, lambda: "block 1" in plain(header), what="the new block")
        assert "resampled" in app.query_one(StatusLine).text
        assert [c[0] for c in source.calls] == ["start", "toggle_pause", "toggle_pause", "resample"]

        source.advance()  # the run ends: the controls say so and call nothing
        await wait_for(pilot, lambda: "DONE" in plain(header), what="done")
        await pilot.press("p")
        assert "the run is done" in app.query_one(StatusLine).text
        assert [c[0] for c in source.calls].count("toggle_pause") == 2
        await pilot.press("q")
    assert source.calls[-1] == ("stop",) and app.return_value == 0
