"""A sweep's log keeps everything finished, as a run's does: real processes and real signals. A sweep detached,
paused through its channel and killed (SIGKILL) resumes from its log, playing no episode twice and none missed;
`attach` shows its board live or finished, and its keys pause it; `tui-eval stop` ends it; a terminal
that goes (tmux kill-session) leaves it running.

The sweeps run in processes of their own (detached, or in tmux); the commands that look at them or end them
(`attach`, `ls`, `stop`, and `resume`, which plays the rest in the foreground) run through the CLI's main in this
process: a process of their own would only add an interpreter's start (torch's import) to each.

The sweeps here race two copies of one checkpoint (`twins`): no copy can be shown worse, so a sweep runs on to
its budget, as long as the test needs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.support.common import ROOT, cli, episodes_in, wait_until
from tests.support.sweep_runs import BEST_RSL
from tests.support.terminals import needs
from tests.support.ui import plain, wait_for
from tui_eval.cli import main
from tui_eval.log.store import RunLog
from tui_eval.runtime import log_lock
from tui_eval.runtime.control import ControlClient

needs_tmux = needs("tmux")


@pytest.fixture
def twins(runs, tmp_path) -> list[str]:
    """Two copies of one rsl_rl checkpoint, each in a folder with the run's params."""
    copies = []
    for name in ("a", "b"):
        folder = tmp_path / name
        shutil.copytree(runs / "rsl" / "params", folder / "params")
        shutil.copy(runs / "rsl" / BEST_RSL, folder / BEST_RSL)
        copies.append(str(folder / BEST_RSL))
    return copies


def _detached(twins: list[str], log: Path, budget: int, *extra: str) -> int:
    """Start the twins' sweep in the background; its pid."""
    proc = cli("sweep", *twins, "--episodes", str(budget), "--detach", "--log", log, *extra, cwd=log.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"sweep {log.stem} started in the background" in proc.stdout
    return int(wait_until(lambda: (log_lock.holder(log) or {}).get("pid"), timeout=120))  # slow when busy


def _tui(capsys, *argv) -> tuple[int, str, str]:
    """`tui-eval ARGV` through the CLI's main in this process: its exit code, stdout and stderr."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    said = capsys.readouterr()
    return code, said.out, said.err


def _played(log: Path) -> Counter:
    return Counter((r.path, r.seed) for r in RunLog(log, readonly=True).records())


def _meta(log: Path) -> dict:
    return RunLog(log, readonly=True).meta()


def test_a_killed_sweep_resumes_from_its_log_playing_no_episode_twice_and_none_missed(twins, tmp_path, capsys):
    log, out, budget = tmp_path / "killed.sqlite", tmp_path / "killed.json", 600
    pid = _detached(twins, log, budget, "--json", str(out))
    wait_until(lambda: episodes_in(log) >= 25, timeout=120)
    assert ControlClient(log).send("pause")["state"] == "paused"
    wait_until(lambda: _meta(log).get("sweep_result") is not None)
    held = episodes_in(log)
    wait_until(lambda: episodes_in(log) == held, timeout=5)  # an episode in flight at the pause may still end
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: log_lock.holder(log) is None)
    before = _played(log)
    assert 25 <= sum(before.values()) < budget and max(before.values()) == 1

    code, shown, _ = _tui(capsys, "attach", log, "--headless")
    assert code == 0 and "(sweep, interrupted (process gone))" in shown
    assert "rank" in shown and "a/" + BEST_RSL in shown
    listed = _tui(capsys, "ls")[1]
    assert log.stem in listed and "interrupted (process gone)" in listed and "sweep of 2" in listed

    code, _, said = _tui(capsys, "resume", log, "--headless")
    assert code == 0, said[-2000:]
    assert f"resuming: {sum(before.values())} finished episodes" in said
    after = _played(log)
    assert sum(after.values()) == budget and max(after.values()) == 1  # none twice
    assert all(after[key] for key in before)  # every episode finished before the kill is kept
    seeds = {seed for _, seed in after}
    assert len(seeds) == budget // 2 and max(seeds) - min(seeds) == budget // 2 - 1  # none missed
    result = json.loads(out.read_text())
    assert result["outcome"] == "budget" and result["status"] == "done"
    assert [r["episodes"] for r in result["checkpoints"]] == [300, 300]
    assert _meta(log)["status"] == "done" and len(_meta(log)["resumed_at"]) == 1
    code, _, said = _tui(capsys, "resume", log, "--headless")
    assert code == 2 and "finished; nothing to resume" in said


def test_resuming_mid_round_counts_the_finished_half_and_plays_only_the_rest(twins, tmp_path):
    """In one process, on the same real paths: a race given the first 1.5 rounds of another plays only what is
    missing and ends as that one did."""
    from tui_eval.commands.run import spec_from_args
    from tui_eval.commands.sweep import build_parser
    from tui_eval.kinds import load_kind, sweep_candidates
    from tui_eval.sweep.race import Race, enter, race

    args = build_parser().parse_args([*twins, "--headless"])
    args.checkpoint = args.runs[0]
    entrants, kind = enter(spec_from_args(args), sweep_candidates(args.runs), load_kind)
    start = kind.default_seeds(None)[0].start
    try:
        first: list = []
        whole = race(entrants, Race(start, 100, 0.05, None),
                     on_episode=lambda name, round_no, r: first.append(_as_logged(r, name, round_no)))
        earlier = first[:15]  # round 1 (10 of a's, 10 of b's would be 20): a's 10, then 5 of b's
        again: list = []
        resumed = race(entrants, Race(start, 100, 0.05, None), on_episode=lambda n, k, r: again.append((n, k, r.seed)),
                       earlier=earlier)
    finally:
        for entrant in entrants:
            entrant.path.close()
    assert len(again) == 100 - 15 and not {(r.path, r.block, r.seed) for r in earlier} & set(again)
    assert [(a.name, a.episodes, a.mean) for a in resumed.arms.values()] == \
        [(a.name, a.episodes, a.mean) for a in whole.arms.values()]


def _as_logged(record, name: str, round_no: int):
    import dataclasses

    return dataclasses.replace(record, path=name, block=round_no)


async def test_a_detached_sweep_is_paused_from_its_attached_board_shown_live_and_ended_by_stop(twins, tmp_path,
                                                                                              capsys):
    """One detached sweep, as a user meets it: the attached board pauses and resumes it and `q` leaves it
    running; `attach --headless` shows it live; `tui-eval stop` ends it and `attach` then shows it stopped."""
    log = tmp_path / "viewed.sqlite"
    _detached(twins, log, 400_000)
    wait_until(lambda: _meta(log).get("sweep_result") is not None, timeout=120)
    await _board_pauses_resumes_and_leaves_it_running(log)
    going = episodes_in(log)
    wait_until(lambda: episodes_in(log) > going + 20, timeout=60)
    code, live, _ = _tui(capsys, "attach", log.stem, "--headless", "--json", tmp_path / "live.json")
    assert code == 0 and "(sweep, running)" in live and "leads; still in the race" in live
    now = json.loads((tmp_path / "live.json").read_text())
    assert now["outcome"] is None and now["status"] == "running" and now["checkpoints"][0]["episodes"] > 0
    code, stopped, _ = _tui(capsys, "stop", log.stem)
    assert code == 0 and f"run {log.stem}: stopped" in stopped
    out = (tmp_path / "viewed.out.txt").read_text()  # written by the time stop returns
    assert "stopped after" in out and "leads, not yet shown best" in out
    wait_until(lambda: log_lock.holder(log) is None, timeout=60)
    assert _meta(log)["status"] == "stopped"
    assert _tui(capsys, "attach", log, "--headless")[1].startswith(f"{log} (sweep, stopped)")


async def _board_pauses_resumes_and_leaves_it_running(log: Path) -> None:
    from tui_eval.runtime.sweep_control import poll_log
    from tui_eval.runtime.sweep_live import ChannelControls
    from tui_eval.ui.sweep_app import SweepApp

    app = SweepApp(f"tui-eval sweep {log.stem}", ChannelControls(log), poll=lambda: poll_log(log))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "a/" + BEST_RSL in plain(app.query_one("#board")), what="the board")
        assert "running" in plain(app.query_one("#status"))
        await pilot.press("space")
        await wait_for(pilot, lambda: "paused" in plain(app.query_one("#status")), what="paused")
        held = episodes_in(log)
        await pilot.pause(1.0)
        assert episodes_in(log) - held <= 2  # at most the episodes in flight at the pause
        await pilot.press("space")
        await wait_for(pilot, lambda: episodes_in(log) > held + 2, what="the sweep going on")
        await pilot.press("q")  # leaves the view; the sweep goes on, as an attached run does


@needs_tmux
def test_a_sweep_goes_on_when_its_terminal_goes_and_stops_when_asked(twins, tmp_path, capsys):
    from tests.support.tmux import tmux, wait_screen

    log, session = tmp_path / "hup.sqlite", f"tui-eval-sweep-{os.getpid()}"
    env = " ".join([f"PYTHONPATH={ROOT}", "TERM=xterm-256color", f"TUI_EVAL_STATE={os.environ['TUI_EVAL_STATE']}"])
    command = f"{env} {sys.executable} -m tui_eval.cli sweep {' '.join(twins)} --episodes 400000 --log {log}"
    subprocess.run(["tmux", "new-session", "-d", "-x", "80", "-y", "24", "-s", session, command], check=True,
                   cwd=tmp_path)
    try:
        wait_screen(session, lambda s: "rank" in s and "running" in s)
    finally:
        tmux("kill-session", "-t", session)
    seen = episodes_in(log)
    wait_until(lambda: episodes_in(log) > seen + 100, timeout=60)  # no terminal: the sweep goes on
    assert log_lock.holder(log) is not None
    code, stopped, _ = _tui(capsys, "stop", log)
    assert code == 0 and "stopped" in stopped
    assert "stopped after" in (tmp_path / "hup.out.txt").read_text()
