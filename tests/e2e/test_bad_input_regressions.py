"""Three inputs a new user met that broke the bad-input promise: a script that exits at import, a --log that is not a
run log, a checkpoint whose weights are truncated. Each is one line and exit 2, said before any header, no log left."""

from __future__ import annotations

import shutil

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.common import CARTPOLE

WEIGHTS = "learner_group/learner/rl_module/default_policy/module_state.pkl"


def leftovers(folder) -> list[str]:
    """Files a run that never started left in `folder` (its log, the log's lock)."""
    return sorted(p.name for p in folder.iterdir() if ".sqlite" in p.name or ".db" in p.name)


def test_import_of_a_script_that_exits_is_one_line_not_exit_3(run_dir, capsys):
    script = run_dir / "train_args.py"
    script.write_text("import sys\nsys.exit(3)  # what argparse does when its arguments are missing\n")
    result = in_process(capsys, CARTPOLE, "--headless", "--episodes", "1", "--import", script, "--log", "r.db")
    assert_one_line_error(result, f"--import {script}", "sys.exit(3)", "__main__")
    assert leftovers(run_dir) == []


def test_log_that_is_not_sqlite_says_so_not_resume(run_dir, capsys):
    notes = run_dir / "notes.db"
    notes.write_text("my notes, not a run\n")
    result = in_process(capsys, CARTPOLE, "--headless", "--episodes", "1", "--log", notes)
    assert_one_line_error(result, "is not a run log", "not an SQLite file", "new --log")
    assert "resume" not in result.stderr
    assert notes.read_text() == "my notes, not a run\n"
    assert leftovers(run_dir) == ["notes.db"]  # no lock beside it


def test_log_of_another_program_says_so(run_dir, capsys):
    import sqlite3

    other = run_dir / "app.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    db.close()
    result = in_process(capsys, CARTPOLE, "--headless", "--episodes", "1", "--log", other)
    assert_one_line_error(result, "is not a run log", "another program")
    assert "resume" not in result.stderr


def test_truncated_weights_named_before_the_header_and_no_log(run_dir, capsys):
    checkpoint = run_dir / "checkpoint"
    shutil.copytree(CARTPOLE, checkpoint)
    weights = checkpoint / WEIGHTS
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    result = in_process(capsys, checkpoint, "--headless", "--episodes", "1", "--log", run_dir / "r.db")
    assert_one_line_error(result, str(weights), "unreadable", "copy it again")
    assert "checkpoint:" not in result.stderr and "seeds:" not in result.stderr  # no run header
    assert leftovers(run_dir) == []
