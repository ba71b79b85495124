"""A real run's log broken as disks and programs break files: cut at any point, with a torn WAL, garbage in a
row, another program's SQLite file. `attach`, `ls`, `resume`, `report` and `stop` each say one line (or work), and
whatever episodes are intact are still read and counted by `attach --json` and `report`."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.bad_input import CliResult, in_process
from tests.support.common import CARTPOLE, cli

EPISODES = 6  # per path


@pytest.fixture(scope="module")
def finished_log(tmp_path_factory) -> Path:
    """The log of a real run of the demo checkpoint, finished: its two paths without Ray (connectors, and the same
    as `vs`), which would only add its start to the run; what is broken here is the log."""
    log = tmp_path_factory.mktemp("finished") / "run.sqlite"
    proc = cli(CARTPOLE, "--headless", "--vs", CARTPOLE, "--paths", "connectors,vs", "--episodes", EPISODES,
               "--seeds", "0:6", "--log", log)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with sqlite3.connect(log) as db:  # everything in the file itself: the copies below are of it alone
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA journal_mode=DELETE")
    db.close()
    assert len(records_of(log)) == 2 * EPISODES
    return log


def records_of(log: Path) -> list[tuple]:
    with sqlite3.connect(log) as db:
        return db.execute("SELECT path, seed, ret FROM episodes ORDER BY id").fetchall()


def copy_of(log: Path, folder: Path, name: str = "broken.sqlite") -> Path:
    target = folder / name
    shutil.copyfile(log, target)
    return target


def assert_one_line_or_ok(result: CliResult) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr[-3000:]
    if result.returncode == 0:
        return
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    errors = [line for line in result.stderr.splitlines() if line.startswith("tui-eval: error: ")]
    assert len(errors) == 1, result.stderr[-2000:]


def summary_of(log: Path, folder: Path, capsys) -> dict | None:
    """`attach --json`'s summary of `log`, or None when attach said one line instead."""
    out = folder / "summary.json"
    out.unlink(missing_ok=True)
    result = in_process(capsys, "attach", log, "--headless", "--json", out)
    assert_one_line_or_ok(result)
    return json.loads(out.read_text()) if result.returncode == 0 else None


@pytest.fixture(autouse=True)
def own_registry(monkeypatch, tmp_path_factory):
    """The broken logs are listed in a registry of these tests' own (`ls` reads them; no other test sees them)."""
    monkeypatch.setenv("TUI_EVAL_STATE", str(tmp_path_factory.mktemp("state")))


def every_command(log: Path, folder: Path, capsys) -> None:
    from tui_eval.runtime import run_registry

    run_registry.register(log)  # as the run that wrote it did: `ls` lists it
    listing = in_process(capsys, "ls")
    assert listing.returncode == 0 and log.stem in listing.stdout, listing.stderr[-2000:]
    for args in (["attach", log, "--headless"], ["stop", log], ["resume", log, "--headless"],
                 ["report", log, "--out", folder / "report.svg"]):
        assert_one_line_or_ok(in_process(capsys, *args))


LOG_CUTS = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@LOG_CUTS
@given(fraction=st.floats(min_value=0.0, max_value=0.999))
def test_a_log_cut_anywhere(finished_log, tmp_path_factory, fraction, capsys):
    folder = tmp_path_factory.mktemp("cut")
    log = copy_of(finished_log, folder)
    data = log.read_bytes()
    log.write_bytes(data[: int(len(data) * fraction)])
    summary = summary_of(log, folder, capsys)
    if summary is not None:  # what it read, it read right: episodes of the run, none made up
        intact = records_of(finished_log)
        read = [(e["path"], e["seed"], e["return"]) for e in summary["episodes"]]
        assert set(read) <= set(intact)
    every_command(log, folder, capsys)


def test_garbage_in_a_row_loses_that_row_only(finished_log, tmp_path, capsys):
    log = copy_of(finished_log, tmp_path)
    with sqlite3.connect(log) as db:
        db.execute("UPDATE episodes SET ret = 'garbage', modules = '{not json' WHERE id = 2")
    db.close()
    summary = summary_of(log, tmp_path, capsys)
    assert summary is not None
    assert len(summary["episodes"]) == len(records_of(finished_log)) - 1
    report = in_process(capsys, "report", log, "--out", tmp_path / "report.svg")
    assert report.returncode == 0, report.stderr[-2000:]
    every_command(log, tmp_path, capsys)


def test_a_torn_wal_keeps_the_committed_episodes(finished_log, tmp_path, capsys):
    """A WAL cut in the middle of its last frame (the writer died while appending): the episodes committed
    before it are read; the torn frame is not."""
    log = copy_of(finished_log, tmp_path)
    writer = sqlite3.connect(log, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO episodes (path, seed, block, ret, length, invalid, wall_s, finished_at) "
                   "SELECT path, seed + 100, block, ret, length, invalid, wall_s, finished_at FROM episodes LIMIT 1")
    wal = Path(f"{log}-wal")
    torn = wal.read_bytes()
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copyfile(log, copy / log.name)
    Path(f"{copy / log.name}-wal").write_bytes(torn[: len(torn) - 100])
    writer.close()
    summary = summary_of(copy / log.name, copy, capsys)
    assert summary is not None
    assert len(summary["episodes"]) == len(records_of(finished_log))
    every_command(copy / log.name, copy, capsys)


def test_another_programs_sqlite_file(tmp_path, capsys):
    other = tmp_path / "app.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    db.close()
    for args in (["attach", other, "--headless"], ["stop", other], ["resume", other, "--headless"],
                 ["report", other, "--out", tmp_path / "r.svg"]):
        result = in_process(capsys, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert_one_line_or_ok(result)
        assert "not a tui-eval run log" in result.stderr or "not a run log" in result.stderr, result.stderr
