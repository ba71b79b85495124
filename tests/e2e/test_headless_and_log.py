"""The headless view, the --json summary, Ctrl-C, and a log that survives SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys

from tests.support.cli_jobs import DEFAULT_SUMMARY, result_of
from tests.support.common import CARTPOLE, ROOT, cli, wait_until
from tui_eval.log.store import RunLog
from tui_eval.stats.declared import declared

PATH_KEYS = {stat.key for stat in declared()} | {"explore", "episodes_per_s", "env_steps_per_s"}


def _count(log_path) -> int:
    try:
        with sqlite3.connect(f"file:{log_path}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_default_run_summary_json_and_fail_on_differ(prefetcher, tmp_path):
    """The demo's defaults (evaluate samples, connectors does not) differ; --fail-on-differ says so with 3."""
    # --headless --episodes 64 --num-envs 8 --json s.json --log run.sqlite --fail-on-differ (a background job)
    proc, tmp_path = result_of(prefetcher, DEFAULT_SUMMARY, tmp_path / "run")
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["kind"] == "rllib" and summary["env"] == "CartPole-v1"
    assert summary["checkpoint"] == str(CARTPOLE)
    assert summary["seeds"][1] - summary["seeds"][0] == 64
    assert set(summary["paths"]) == {"evaluate", "connectors"}
    for name, path in summary["paths"].items():
        assert PATH_KEYS <= set(path), name
        assert path["episodes"] == 64 and path["invalid"] == 0
        assert path["ci95"][0] <= path["mean"] <= path["ci95"][1]
        assert path["success_rate"] is None  # CartPole reports no success signal
    assert summary["paths"]["evaluate"]["explore"] is True
    assert summary["paths"]["connectors"]["explore"] is False
    assert summary["comparison"]["verdict"] == "differ" and summary["comparison"]["paired"] == 64
    assert len(summary["episodes"]) == 128
    seeds = {p: sorted(e["seed"] for e in summary["episodes"] if e["path"] == p) for p in summary["paths"]}
    assert seeds["evaluate"] == seeds["connectors"] == list(range(*summary["seeds"]))
    # the table on stdout, progress and facts on stderr
    for word in ("evaluate", "connectors", "DIFFER", "anytime 95%"):
        assert word in proc.stdout
    assert "explore evaluate: on (library default: RLlib's evaluation config (evaluation_config.explore))" \
        in proc.stderr
    # the log holds the same episodes, readable by `attach --headless`
    assert len(RunLog(tmp_path / "run.sqlite", readonly=True).records()) == 128
    attached = cli("attach", tmp_path / "run.sqlite", "--headless", cwd=tmp_path)
    assert attached.returncode == 0 and "DIFFER" in attached.stdout
    listed = cli("ls", cwd=tmp_path)
    assert "run.sqlite" in listed.stdout and "evaluate:64" in listed.stdout and "done" in listed.stdout


def _start(tmp_path, *extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", "tui_eval.cli", str(CARTPOLE), "--headless", "--paths", "connectors",
         "--episodes", "100000", "--num-envs", "2", "--log", str(tmp_path / "run.sqlite"), *extra],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_sigkill_keeps_every_finished_episode(tmp_path):
    proc = _start(tmp_path)
    try:
        wait_until(lambda: _count(tmp_path / "run.sqlite") >= 6, timeout=120)
        seen_before_kill = _count(tmp_path / "run.sqlite")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    records = RunLog(tmp_path / "run.sqlite", readonly=True).records()
    assert len(records) >= seen_before_kill >= 6
    # records are whole: each seed once, from the run's held-out block, each a full episode (episodes
    # in flight at the kill are lost, so the seeds need not be contiguous)
    seeds = [r.seed for r in records]
    assert len(set(seeds)) == len(seeds)
    start = RunLog(tmp_path / "run.sqlite", readonly=True).meta()["seeds"][0]
    assert min(seeds) >= start
    assert all(r.length > 0 and r.ret == r.length for r in records)  # CartPole: +1 per step


def test_ctrl_c_stops_prints_what_finished_and_exits_130(tmp_path):
    proc = _start(tmp_path, "--json", str(tmp_path / "s.json"))
    try:
        wait_until(lambda: _count(tmp_path / "run.sqlite") >= 4, timeout=120)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    assert "connectors" in out and "interrupted" in err
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["paths"]["connectors"]["episodes"] == _count(tmp_path / "run.sqlite") >= 4
    assert RunLog(tmp_path / "run.sqlite", readonly=True).meta()["status"] == "interrupted"
