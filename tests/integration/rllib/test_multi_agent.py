"""Multi-agent checkpoints: RLlib's MultiAgentCartPole with three agents, two modules and a policy_mapping_fn
that is a lambda of the user's module (tests/support/user_project/my_marl_project.py; trained by the zoo, one
iteration of tiny PPO). Both paths run every module; per episode the team return and each module's return
and agent steps, identical per module seed by seed with explore off; `--module` narrows the view; what the
paths cannot replicate yet is refused before any episode."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.engines import EVALUATE_DEFAULT, plan_for, run_to_end
from tests.support.ui import plain, wait_for
from tui_eval.log.store import RunLog

MODULES = ["p0", "p1"]


def _per_module(episodes: list[dict], path: str) -> dict[int, dict]:
    return {e["seed"]: e["modules"] for e in episodes if e["path"] == path}


@pytest.fixture(scope="module")
def team_run(zoo, tmp_path_factory, capsys_module):  # noqa: F811
    """One headless run of both paths, explore off, 4 seeds: its result, summary and log."""
    out = tmp_path_factory.mktemp("team")
    result = capsys_module(zoo / "multi_agent", "--headless", "--episodes", "4", "--explore", "evaluate=off",
                           "--json", out / "s.json", "--log", out / "run.sqlite")
    return result, json.loads((out / "s.json").read_text()), out / "run.sqlite"


@pytest.fixture(scope="module")
def capsys_module():
    """The CLI in this process, its output captured (capsys is per test; this fixture is per module)."""
    import contextlib
    import io

    from tests.support.bad_input import CliResult
    from tui_eval.cli import main

    def run(*args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
        return CliResult(code, out.getvalue(), err.getvalue())
    return run


def test_explore_off_every_module_has_identical_returns_on_both_paths_seed_by_seed(team_run):
    result, summary, _ = team_run
    assert result.returncode == 0, result.stderr[-3000:]
    evaluate, connectors = _per_module(summary["episodes"], "evaluate"), _per_module(summary["episodes"],
                                                                                      "connectors")
    assert len(evaluate) == 4 and evaluate == connectors, (evaluate, connectors)
    for episode in summary["episodes"]:
        assert list(episode["modules"]) == MODULES
        assert episode["return"] == sum(m["return"] for m in episode["modules"].values())  # the team's
        # the user's lambda maps agents 0 and 2 to p0, agent 1 to p1: p0 takes twice p1's agent steps
        # until one pole falls (each agent's CartPole runs until its own pole falls)
        assert episode["modules"]["p0"]["agent_steps"] > episode["modules"]["p1"]["agent_steps"] > 0
    assert summary["module_view"] == "team" and "team" not in summary
    for module in MODULES:
        part = summary["modules"][module]
        assert part["comparison"]["exact"] is True and part["comparison"]["verdict"] != "differ"
        assert part["paths"]["evaluate"]["mean"] == part["paths"]["connectors"]["mean"]
        assert part["paths"]["evaluate"]["episodes"] == 4
    assert summary["comparison"]["exact"] is True


def test_the_table_and_progress_line_show_each_module(team_run):
    result, summary, _ = team_run
    assert "returns above: the team (all modules); per module:" in result.stdout
    for module in MODULES:
        assert f"{module}: verdict:" in result.stdout
        mean = summary["modules"][module]["paths"]["evaluate"]["mean"]
        assert f"{module} evaluate {mean:.1f} connectors {mean:.1f}" in result.stderr  # the progress line
    facts = " ".join((result.stdout + result.stderr).split())
    assert "module: multi-agent: all of p0, p1 (policy_mapping_fn <lambda>)" in facts


def test_module_narrows_the_view_and_explore_on_runs_every_module_on_both_paths(zoo, tmp_path, capsys):  # noqa: F811
    plan = plan_for(zoo / "multi_agent", "--episodes", "2", "--explore", "connectors=on", log=tmp_path / "p.sqlite")
    assert plan.explore == {"evaluate": True, "connectors": True}
    assert plan.explore_source == {"evaluate": EVALUATE_DEFAULT, "connectors": "--explore"}
    result = in_process(capsys, zoo / "multi_agent", "--headless", "--episodes", "2", "--module", "p1",
                        "--explore", "connectors=on", "--json", tmp_path / "s.json", "--log", tmp_path / "r.sqlite")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["module_view"] == "p1" and set(summary["modules"]) == set(MODULES)
    for path in ("evaluate", "connectors"):
        ran = [e for e in summary["episodes"] if e["path"] == path]
        assert len(ran) == 2 and all(e["explore"] is True and not e["invalid"] for e in ran)
        assert all(list(e["modules"]) == MODULES and e["return"] == e["modules"]["p1"]["return"] for e in ran)
        team = summary["team"]["paths"][path]["mean"]
        p0, p1 = (summary["modules"][m]["paths"][path]["mean"] for m in MODULES)
        assert summary["paths"][path]["mean"] == p1 and team == pytest.approx(p0 + p1)
    assert "returns above: module p1 (--module)" in result.stdout and "team: verdict:" in result.stdout


@pytest.mark.parametrize("extra, needles", [
    (["--module", "p7"], ["--module 'p7' is not in the checkpoint", "its modules are: p0, p1"]),
])
def test_what_the_paths_cannot_replicate_is_refused_before_any_episode(zoo, extra, needles, run_dir,  # noqa: F811
                                                                        capsys):
    result = in_process(capsys, zoo / "multi_agent", "--headless", "--episodes", "2",
                        *[a.format(zoo=zoo) for a in extra])
    assert_one_line_error(result, *needles)
    for log in run_dir.glob("tui-eval-runs/*.sqlite"):
        assert RunLog(log, readonly=True).records() == []


@pytest.mark.parametrize("width", [120, 80])
async def test_the_app_shows_each_module(team_run, width):
    from tui_eval.ui.app import EvalApp
    from tui_eval.ui.widgets.modules_panel import ModulesPanel

    _, summary, log = team_run
    app = EvalApp(log_path=log)
    async with app.run_test(size=(width, 48)) as pilot:
        panel = app.query_one(ModulesPanel)
        text = await wait_for(pilot, lambda: panel.display and panel.part and plain(panel, width),
                              what="module rows")
        for module in MODULES:
            assert module in text
            assert f"{summary['modules'][module]['paths']['connectors']['mean']:.1f}" in text
        assert "…" not in text  # at 80 columns the sparkline narrows; no number is cut
        assert "per module (returns above: the team)" in text and "UNDECIDED" in text
        await pilot.press("q")


def test_a_log_written_before_per_module_returns_reads_and_grows(tmp_path):
    old = tmp_path / "old.sqlite"
    db = sqlite3.connect(old)
    db.executescript("""CREATE TABLE run (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE episodes (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, seed INTEGER NOT NULL,
        block INTEGER NOT NULL, ret REAL, length INTEGER NOT NULL, success INTEGER, invalid INTEGER NOT NULL,
        reason TEXT, wall_s REAL NOT NULL, explore INTEGER, finished_at REAL NOT NULL);
        INSERT INTO episodes (path, seed, block, ret, length, success, invalid, reason, wall_s, explore,
        finished_at) VALUES ('evaluate', 3, 0, 12.5, 12, NULL, 0, NULL, 0.1, 0, 1.0);""")
    db.commit()
    db.close()
    [old_record] = RunLog(old, readonly=True).records()
    assert (old_record.seed, old_record.ret, old_record.modules) == (3, 12.5, ())
    log = RunLog(Path(old))  # a writer adds the column, and records with modules read back
    log.append(old_record.__class__(path="connectors", seed=3, ret=3.0, length=2, modules=(("p0", 1.0, 2),
                                                                                            ("p1", 2.0, 2))))
    assert [r.modules for r in log.records()] == [(), (("p0", 1.0, 2), ("p1", 2.0, 2))]


def test_a_broken_world_is_the_same_invalid_episode_on_both_paths(zoo, tmp_path):  # noqa: F811
    from tests.support import multi_agent_fault_envs as faults

    _, records = run_to_end(zoo / "multi_agent", "--env", faults.BREAKING, "--env-config", '{"num_agents": 3}',
                            "--seeds", "10:13", "--explore", "evaluate=off", log=tmp_path / "run.sqlite")
    for path in ("evaluate", "connectors"):
        ran = {r.seed: r for r in records if r.path == path}
        assert sorted(ran) == [10, 11, 12]
        for seed in (10, 12):
            assert ran[seed].invalid and ran[seed].reason == f"non-finite observation at step {faults.BREAK_AT}"
            assert ran[seed].length == faults.BREAK_AT and ran[seed].success is False
        assert not ran[11].invalid
    assert {(r.seed, r.modules, r.invalid) for r in records if r.path == "evaluate"} == \
        {(r.seed, r.modules, r.invalid) for r in records if r.path == "connectors"}


def test_an_agent_that_joins_mid_episode_acts_the_same_on_both_paths(zoo, tmp_path):  # noqa: F811
    from tests.support import multi_agent_fault_envs as envs

    _, records = run_to_end(zoo / "multi_agent", "--env", envs.LATE_JOINING, "--env-config", '{"num_agents": 3}',
                            "--seeds", "20:22", "--explore", "evaluate=off", log=tmp_path / "run.sqlite")
    evaluate = {r.seed: r for r in records if r.path == "evaluate"}
    connectors = {r.seed: r for r in records if r.path == "connectors"}
    assert sorted(evaluate) == [20, 21] and not any(r.invalid for r in records)
    assert {s: r.modules for s, r in evaluate.items()} == {s: r.modules for s, r in connectors.items()}
    for r in records:  # agent 1 (p1) acts from its first observation on, agents 0 and 2 (p0) from the reset
        p1_steps = dict((m, n) for m, _, n in r.modules)["p1"]
        assert 0 < p1_steps <= r.length - envs.JOIN_AT
