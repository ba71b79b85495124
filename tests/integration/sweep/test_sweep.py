"""`tui-eval sweep` on training runs with a best checkpoint known by construction (tests/support/sweep_runs.py):
a Tune experiment of RLlib's PPO with 4 checkpoints and an rsl_rl run with 4 `model_*.pt`. The sweep names the
planted best, spends fewer episodes than running every checkpoint to the budget, says where training's pick
stands, and its exit code gates CI."""

from __future__ import annotations

import json

import pytest

from tests.support.sweep_runs import BEST_RSL, BEST_TUNE, CURVE_START
from tests.support.ui import plain, wait_for
from tui_eval.cli import main


def sweep(tmp_path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "sweep.json"
    code = main(["sweep", *args, "--headless", "--json", str(out)])
    return code, json.loads(out.read_text())


def test_a_tune_experiment_sweep_names_the_planted_best_with_training_metrics(runs, tmp_path, capsys):
    budget = 800
    code, s = sweep(tmp_path, str(runs / "tune" / "sweep_experiment"), "--episodes", str(budget))
    assert code == 0 and s["outcome"] == "best" and s["best"] == BEST_TUNE and s["status"] == "done"
    assert s["indistinguishable"] == [] and s["run"] == str(runs / "tune" / "sweep_experiment")
    rows = {r["checkpoint"]: r for r in s["checkpoints"]}
    assert set(rows) == {f"checkpoint_00000{i}" for i in range(4)}
    assert [rows[f"checkpoint_00000{i}"]["iteration"] for i in range(4)] == [1, 2, 3, 4]
    assert all(r["training_metric_name"] == "env_runners/episode_return_mean" for r in rows.values())
    assert s["episodes"] < budget  # eliminated checkpoints stopped getting episodes
    assert all(r["eliminated_by"] for name, r in rows.items() if name != BEST_TUNE)
    pick = max(rows.values(), key=lambda r: r["training_metric"])
    assert s["training_pick"] == {"checkpoint": pick["checkpoint"], "by": "highest env_runners/episode_return_mean",
                                  "held_out_rank": pick["rank"]}
    best = rows[BEST_TUNE]  # its own anytime interval holds its mean; the seeds are the rounds' seeds
    assert best["cs95"][0] < best["mean"] < best["cs95"][1] and best["eliminated_at"] is None
    assert s["seeds"][1] - s["seeds"][0] == 10 * s["rounds"] and best["episodes"] == 10 * s["rounds"]
    assert "connectors" in s["path"]
    out = capsys.readouterr().out
    assert f"best: {BEST_TUNE}" in out and "training's pick" in out


def test_an_rsl_rl_run_sweep_finds_the_best_and_where_the_newest_stands(runs, tmp_path):
    code, s = sweep(tmp_path, str(runs / "rsl"), "--episodes", "400")
    assert code == 0 and s["best"] == BEST_RSL
    assert s["training_pick"]["checkpoint"] == "model_39.pt" and s["training_pick"]["by"] == "the newest checkpoint"
    rows = {r["checkpoint"]: r for r in s["checkpoints"]}  # rsl_rl's TensorBoard curve, at each iteration
    assert {n: r["training_metric"] for n, r in rows.items()} == {f"model_{i}.pt": CURVE_START + i
                                                                  for i in (10, 20, 30, 39)}
    assert all(r["training_metric_name"] == "Train/mean_reward" for r in rows.values())
    assert s["training_pick"]["held_out_rank"] > 1
    assert s["path"].startswith("runner") and "explore off" in s["path"]
    assert s["episodes"] < 400


def test_fail_if_not_best_exits_3_when_another_checkpoint_is_shown_better(runs, tmp_path):
    assert sweep(tmp_path, str(runs / "rsl"), "--episodes", "400", "--fail-if-not-best", "model_39.pt")[0] == 3
    assert sweep(tmp_path, str(runs / "rsl"), "--episodes", "400", "--fail-if-not-best", BEST_RSL)[0] == 0


@pytest.mark.parametrize("argv, says", [
    (["sweep", "/no/such/run"], "does not exist"),
    (["sweep", "{rsl}/model_20.pt"], "holds 1"),
    (["sweep", "{rsl}", "--fail-if-not-best", "model_7.pt"], "no such checkpoint"),
    (["sweep", "{rsl}", "--round", "1"], "--round expects 2 or more"),
    (["sweep", "{rsl}/model_20.pt", "{tune}"], "a sweep compares checkpoints of one kind"),
    (["sweep", "/no/such/run", "--detach"], "does not exist"),  # said here, not in the background
    (["sweep", "{rsl}", "--detach", "--fail-if-not-best", "model_7.pt"], "no such checkpoint"),
    (["sweep", "{rsl}", "--frames"], "a sweep shows no frames"),
    (["sweep", "{rsl}", "--episodes", "8"], "--episodes 8 is less than one round (10 seeds x"),  # it played nothing
])
def test_bad_sweep_input_is_one_line_exit_2(runs, capsys, argv, says):
    tune = next((runs / "tune" / "sweep_experiment").glob(f"*/{BEST_TUNE}"))
    assert main([a.format(rsl=runs / "rsl", tune=tune) for a in argv] + ["--headless"]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1 and "Traceback" not in err


async def test_the_live_leaderboard_shows_each_round_and_q_stops_the_sweep(runs, tmp_path):
    """The app over a real sweep (the rsl_rl run): the board and the forest plot after the rounds, readable at
    120x40 and 80x24; `q` closes it (on a sweep in progress it stops the sweep: test_sweep_lifecycle.py)."""
    from tui_eval.commands.run import spec_from_args
    from tui_eval.commands.sweep import build_parser
    from tui_eval.kinds import load_kind, sweep_candidates
    from tui_eval.log.store import RunLog
    from tui_eval.runtime.sweep_live import LocalControls, rounds_for
    from tui_eval.sweep.race import Board, Race, enter
    from tui_eval.sweep.sweep_log import SweepRecord
    from tui_eval.ui.sweep_app import SweepApp

    args = build_parser().parse_args([str(runs / "rsl"), "--headless"])
    args.checkpoint = args.runs[0]
    entrants, kind = enter(spec_from_args(args), sweep_candidates(args.runs), load_kind)
    settings = Race(kind.default_seeds(None)[0].start, 400, 0.05, None)
    app, done = SweepApp("sweep test", LocalControls(settings)), {}
    log = RunLog(tmp_path / "sweep.sqlite")
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            worker = rounds_for(app, Board(entrants, settings, {"path": "runner"}, SweepRecord(log)), done, [])
            worker.start()
            # the status line follows the result by a refresh: waited for with it, not read at once
            await wait_for(pilot, lambda: "result" in done and app.result is not None and
                           app.result["outcome"] == "best" and "done" in plain(app.query_one("#status")),
                           timeout=120, what="the sweep's end")
            board = plain(app.query_one("#board"))
            assert BEST_RSL in board and "out r3 < " in board
            assert f"best: {BEST_RSL}" in plain(app.query_one("#verdict"))
            plot = plain(app.query_one("#forest"))
            assert all(name in plot for name in ("model_10.pt", "model_20.pt", "model_39.pt")) and "●" in plot
            await pilot.resize_terminal(80, 24)
            await pilot.pause(0.2)
            assert "rank" in plain(app.query_one("#board"))
            await pilot.press("q")
        worker.join(30)
        assert not worker.is_alive() and not app.is_running
        assert log.meta()["sweep_result"]["best"] == BEST_RSL and log.count() == done["result"]["episodes"]
    finally:
        for entrant in entrants:
            entrant.path.close()


def test_workers_spread_each_checkpoints_episodes_over_ray_actors_with_the_same_result(runs, prefetcher, tmp_path):
    """`--workers 2`: every checkpoint's path in two actors of a local Ray (in a process of its own, as a user
    runs it); the same seeds give the same episodes, so the board is the in-process sweep's. Two of the run's
    checkpoints (four actors, not eight: each actor loads torch and the policy on its own) still race to an
    elimination."""
    from tests.support.cli_jobs import result_of
    from tests.support.jobs import SWEEP_WORKERS

    pair = [runs / "rsl" / BEST_RSL, runs / "rsl" / "model_10.pt"]
    code, alone = sweep(tmp_path, *map(str, pair), "--episodes", "400")
    proc, out = result_of(prefetcher, SWEEP_WORKERS, tmp_path / "job")  # the same pair with --workers 2 (a job)
    assert proc.returncode == 0, proc.stderr[-3000:]
    spread = json.loads((out / "workers.json").read_text())
    assert spread["best"] == alone["best"] == BEST_RSL and spread["episodes"] < 400
    assert [(r["checkpoint"], r["episodes"]) for r in spread["checkpoints"]] == \
        [(r["checkpoint"], r["episodes"]) for r in alone["checkpoints"]]
    # the same episodes, to float rounding (the actors' torch may use other thread counts)
    assert [r["mean"] for r in spread["checkpoints"]] == pytest.approx([r["mean"] for r in alone["checkpoints"]],
                                                                     rel=1e-6)
