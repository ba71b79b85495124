"""The live app (Pilot, headless driver) over a real engine: on scripted paths (tests/support/fake_path.py,
a fake kind: no policy, no Ray) where what is tested is the app's view and keys of a run, on the bundled
CartPole checkpoint where a real path fails to load. Real paths in the real app: tests/e2e/test_tmux.py.

One app run per behaviour: `connectors` alone where one path is enough, both paths in one test.
"""

from __future__ import annotations

import csv
import io
import json
import threading

import pytest

from tests.support.fake_path import Script, fake_plan
from tests.support.ui import plain, wait_for
from tui_eval.cli import build_parser, spec_from_args
from tui_eval.log.store import RunLog
from tui_eval.runtime.app_process import finish_live
from tui_eval.session import plan_run
from tui_eval.ui.app import EXIT_BAD_INPUT, EvalApp
from tui_eval.ui.records_export import export_paths
from tui_eval.ui.widgets import (
    ComparisonTable,
    EpisodeLog,
    Histograms,
    RunHeader,
    SeedDetail,
    Sparklines,
    StatusLine,
    VerdictBar,
)

NUM_ENVS = 4


def scripted(**step) -> Script:
    return Script(num_envs=NUM_ENVS, step_s=0.005, **step)


def differ_when_sampling(seed: int, explore: bool) -> float:
    """A sampling `vs` path scores lower than the greedy one, by an amount that varies with the seed."""
    return float(seed % 10 - (2 + seed * 7919 % 5 if explore else 0))


def episodes(app) -> int:
    return sum(s.episodes for s in app.engine.stats.paths.values())


async def settle(pilot, app, timeout: float = 60.0) -> int:
    """Wait until the episodes in flight at a pause have finished and been recorded."""
    await wait_for(pilot, lambda: app.engine.in_flight() == 0, timeout=timeout, what="episodes in flight to finish")
    return episodes(app)


async def _live_connectors(tmp_path, apps, **step):
    plan = fake_plan(tmp_path, {"connectors": scripted(**step)})
    app = EvalApp(plan)
    apps.append(app)
    return plan, app


async def _wait_loaded(pilot, app):
    await wait_for(pilot, lambda: app.engine is not None, what="engine loaded")
    await wait_for(pilot, lambda: len(app.query_one(EpisodeLog).rows) >= 8, what="rows in the episode log")
    await wait_for(pilot, lambda: app.summaries.get("connectors", {}).get("episodes", 0) > 0, what="table")


async def test_live_run_shows_loading_then_pause_stops_records_and_resume_continues(tmp_path, apps):
    _, app = await _live_connectors(tmp_path, apps)
    loaded, load = threading.Event(), app._load
    # the load (in a thread) waits until the loading state was seen: a fast load cannot skip it
    app._load = lambda: loaded.wait(60) and load()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        header = app.query_one(RunHeader)
        await pilot.pause(0.1)
        assert app.engine is None and "LOADING" in plain(header)
        loaded.set()
        await _wait_loaded(pilot, app)
        assert "connectors" in plain(app.query_one(ComparisonTable))
        assert "RUNNING" in plain(header)

        # pause: the header says so at once; new records stop once the episodes in flight finish
        await pilot.press("p")
        assert app.engine.state == "paused"
        assert "PAUSED" in plain(header)
        at_press = episodes(app)
        paused_at = await settle(pilot, app)
        assert paused_at <= at_press + NUM_ENVS
        await pilot.pause(0.6)
        assert episodes(app) == paused_at, "a record arrived while paused"

        await pilot.press("space")
        assert "RUNNING" in plain(header)
        await wait_for(pilot, lambda: episodes(app) > paused_at, what="records after resume")


async def test_live_resample_moves_to_a_fresh_block_and_a_path_error_becomes_a_status(tmp_path, apps):
    # the script's second run() call (after a pause, on resume) raises: a real path failure in the engine
    _, app = await _live_connectors(tmp_path, apps, crash_on_runs=frozenset({2}), crash_message="boom")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _wait_loaded(pilot, app)
        header, log = app.query_one(RunHeader), app.query_one(EpisodeLog)
        old_block = app.engine.blocks[-1]
        await pilot.press("r")
        new_block = app.engine.blocks[-1]
        assert len(app.engine.blocks) == 2 and new_block.start >= old_block.start
        assert "block 1" in plain(header)
        await wait_for(pilot, lambda: any(r.block == 1 for r in log.rows), what="a record of block 1")
        fresh = [r for r in log.rows if r.block == 1]
        assert all(r.seed >= new_block.start for r in fresh)
        await pilot.press("b")  # statistics of this block only
        await wait_for(pilot, lambda: "block 1 only" in str(app.query_one("#compare").border_title), what="view")
        await pilot.press("b")

        # a path that fails becomes a notification and a status line, not a crash; it is loaded afresh
        await pilot.press("p")
        await settle(pilot, app)
        await pilot.press("space")
        await wait_for(pilot, lambda: any("boom" in m for m in app.query_one(StatusLine).messages),
                       what="error status")
        assert any("RuntimeError: boom" in str(n.message) for n in app._notifications)
        assert [e.message for e in app.engine.errors] == ["RuntimeError: boom"]
        before = episodes(app)
        await wait_for(pilot, lambda: episodes(app) > before, what="records from the path loaded afresh")


async def test_live_export_matches_the_log_and_quit_keeps_every_episode(tmp_path, apps):
    plan, app = await _live_connectors(tmp_path, apps)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _wait_loaded(pilot, app)
        await pilot.press("p")
        await settle(pilot, app)
        await pilot.press("e")
        # the message may already be followed by another (a state change read at the same tick)
        await wait_for(pilot, lambda: any("exported" in m for m in app.query_one(StatusLine).messages),
                       what="export")
        csv_path, json_path = export_paths(plan.log_path)
        logged = RunLog(plan.log_path, readonly=True).records()
        with csv_path.open() as fh:
            rows = list(csv.DictReader(fh))
        assert [(r["path"], int(r["seed"]), int(r["block"]), float(r["return"])) for r in rows] == \
               [(r.path, r.seed, r.block, r.ret) for r in logged]
        document = json.loads(json_path.read_text())
        assert [e["seed"] for e in document["episodes"]] == [r.seed for r in logged]
        assert document["paths"]["connectors"]["episodes"] == len(logged)

        await pilot.press("q")
    out, err = io.StringIO(), io.StringIO()
    assert finish_live(app, app.return_value, out=out, err=err) == 0
    assert "connectors" in out.getvalue() and "verdict" in out.getvalue()
    reread = RunLog(plan.log_path, readonly=True)
    assert reread.meta()["status"] == "stopped"
    assert reread.count() == episodes(app)  # every finished episode is in the log


def two_scripted_paths(tmp_path, apps) -> tuple:
    """(plan, app): two identical deterministic scripts of 12 episodes each."""
    plan = fake_plan(tmp_path, {"evaluate": scripted(), "connectors": scripted()}, episodes=12)
    app = EvalApp(plan)
    apps.append(app)
    return plan, app


async def run_to_its_end(pilot, app, plan) -> None:
    await wait_for(pilot, lambda: app.engine is not None and app.engine.state == "done", timeout=150,
                   what="both paths done")
    await wait_for(pilot, lambda: all(app.summaries.get(n, {}).get("episodes") == 12 for n in plan.paths),
                   what="final statistics")


async def test_both_paths_side_by_side(tmp_path, apps):
    plan, app = two_scripted_paths(tmp_path, apps)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_to_its_end(pilot, app, plan)
        table = plain(app.query_one(ComparisonTable))
        assert "evaluate" in table and "connectors" in table and "Δ evaluate−connectors" in table
        # two identical deterministic scripts: the same return on every seed
        verdict = plain(app.query_one(VerdictBar))
        assert "IDENTICAL  on 12/12 seeds" in verdict, verdict
        assert "identical on 12/12 seeds" in verdict and "with both deterministic" in verdict, verdict
        sparks = app.query_one(Sparklines)
        assert all(len(sparks.points[n]) == 12 for n in plan.paths)
        assert "DONE" in plain(app.query_one(RunHeader))

        # both paths' results for one seed, side by side
        log = app.query_one(EpisodeLog)
        log.focus()
        await pilot.press("enter")
        detail = app.query_one(SeedDetail)
        await wait_for(pilot, lambda: detail.records is not None, what="seed look-up")
        assert {r.path for r in detail.records} == set(plan.paths)
        assert detail.seed == log.selected().seed
        shown = plain(detail)
        assert f"seed {detail.seed}" in shown and "evaluate" in shown and "connectors" in shown
        assert app.query_one("#detail-panel").display

        # 80x24: panels collapse (no histograms, fewer columns) and the essentials stay
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.3)
        assert not app.query_one(Histograms).display
        widget = app.query_one(ComparisonTable)
        table = plain(widget)
        assert "evaluate" in table and "connectors" in table and "mean len" not in table
        assert max(len(line.rstrip()) for line in table.splitlines()) <= widget.size.width
        await pilot.press("q")
    out = io.StringIO()
    assert finish_live(app, app.return_value, out=out, err=io.StringIO()) == 0
    assert "evaluate" in out.getvalue() and "connectors" in out.getvalue()
    assert RunLog(plan.log_path, readonly=True).meta()["status"] == "done"


async def test_load_failure_is_shown_and_exits_2(tmp_path, apps):
    # A path that plans fine and fails only when it loads: a `--path` loop whose factory raises (a damaged
    # checkpoint file is refused before planning, so it cannot serve here)
    from tests.support.common import CARTPOLE

    loop = tmp_path / "broken_loop.py"
    loop.write_text("def make(checkpoint, explore, device):\n    raise RuntimeError('the loop cannot start')\n")
    plan = plan_run(spec_from_args(build_parser().parse_args(
        [str(CARTPOLE), "--path", f"mine={loop}:make", "--paths", "mine", "--log", str(tmp_path / "run.sqlite")])))
    app = EvalApp(plan)
    apps.append(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.load_error is not None, what="load failure")
        assert "FAILED" in plain(app.query_one(RunHeader))
        assert "CANNOT RUN" in plain(app.query_one(VerdictBar))
        assert "could not" in app.query_one(StatusLine).text
        await pilot.press("p")  # controls say why they do nothing
        assert "cannot run" in app.query_one(StatusLine).text
        await pilot.press("q")
    err = io.StringIO()
    assert app.return_value == EXIT_BAD_INPUT
    assert finish_live(app, app.return_value, out=io.StringIO(), err=err) == EXIT_BAD_INPUT
    assert err.getvalue().startswith("tui-eval: error: --path mine: ") and "raised RuntimeError: the loop cannot " \
        "start" in err.getvalue()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_layout_without_engine(tmp_path, size):
    """While loading, every panel is laid out at both sizes and keys need no engine."""
    plan = fake_plan(tmp_path, {"connectors": scripted()})
    app = EvalApp(plan)
    app._load = lambda: None  # never loads: the loading state stays
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.2)
        assert "LOADING" in plain(app.query_one(RunHeader))
        for key in ("p", "r", "x", "b", "f", "i"):
            await pilot.press(key)
        said = app.query_one(StatusLine).messages
        assert all(f"{control}: still loading" in said for control in ("pause", "resample", "explore")), said
        await pilot.press("question_mark")
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        assert app.query_one(Histograms).display == (size[1] >= 32)
        await pilot.press("h")  # h flips them whatever the size
        assert app.query_one(Histograms).display == (size[1] < 32)
        await pilot.press("q")
    assert app.return_value == 0


async def test_until_decided_ends_the_live_run_and_says_what_was_decided(tmp_path, apps):
    """`--until-decided` in the app: the run ends at the answer, and the status line says which, after how
    many pairs (a sampling `vs` path differs from the greedy one on the first seeds)."""
    plan = fake_plan(tmp_path, {"connectors": scripted(ret=differ_when_sampling),
                                "vs": scripted(ret=differ_when_sampling)},
                     explore={"vs": True}, until_decided=True, episodes=400)
    app = EvalApp(plan)
    apps.append(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.engine is not None and app.engine.state == "done", timeout=120,
                       what="the run to end at its answer")
        said = await wait_for(pilot, lambda: next((m for m in app.query_one(StatusLine).messages
                                                   if m.startswith("done: verdict")), None), what="the status line")
        assert "differ after" in said and "stopped early" in said, said
        assert episodes(app) < 2 * 400


async def test_histograms_shown_by_a_resize_after_the_run_is_done_show_its_returns(tmp_path, apps):
    # started at 80x24 (no room for histograms), grown to 120x40 once no episode will come any more
    plan, app = two_scripted_paths(tmp_path, apps)
    async with app.run_test(size=(80, 24)) as pilot:
        await run_to_its_end(pilot, app, plan)
        histograms = app.query_one(Histograms)
        assert not histograms.display
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: histograms.display and "n=12" in plain(histograms), timeout=10,
                       what=f"the returns in the histograms, not {plain(histograms)!r}")
        await pilot.press("q")
