"""Command lines drawn from every command's own option declarations, with wrong, empty, huge, unicode values and
paths that do not exist or are folders: the real CLI (in this process) either starts the run, or says one line on
stderr and exits 2. Never a traceback, never another exit code, never a log left behind by a run that did not start.

The run is let go up to the moment it would start stepping (its engine, its app, its background process): what
comes before, parsing, every check, reading and planning the real checkpoint, runs for real. A larger number of
examples runs with TUI_EVAL_FUZZ_EXAMPLES=N (bench/fuzz_command_lines.sh)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.common import CARTPOLE
from tests.support.fuzz_argv import NO_SUCH_PATH, hostile_values, option_sets, parser_of
from tests.support.run_start import RunStarts, stop_runs_at_start

EXAMPLES = int(os.environ.get("TUI_EVAL_FUZZ_EXAMPLES", "40"))
FOLDER = Path(tempfile.mkdtemp(prefix="tui-eval-fuzz-"))  # an existing folder the values may name
(FOLDER / "empty.py").write_text("")
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module", autouse=True)
def remove_the_folder():
    yield
    shutil.rmtree(FOLDER, ignore_errors=True)


@pytest.fixture
def stop_at_start(monkeypatch, tmp_path):
    """Each way a run starts ends here instead, once its log is taken (the checks before it are the real ones)."""
    stop_runs_at_start(monkeypatch)
    monkeypatch.setenv("TUI_EVAL_STATE", str(tmp_path / "state"))


def outcome(argv: list[str], capsys) -> tuple[str, int | None, str, Path]:
    """Run the CLI on `argv` in a fresh working folder: ("started" | "exit", code, stderr, folder)."""
    from tui_eval.cli import main

    capsys.readouterr()
    here, folder = os.getcwd(), Path(tempfile.mkdtemp(prefix="tui-eval-fuzz-run-"))
    os.chdir(folder)
    try:
        code = main(argv)
        kind = "exit"
    except RunStarts:
        kind, code = "started", None
    except SystemExit as exc:  # --help, --version
        kind, code = "exit", exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(here)
    return kind, code, capsys.readouterr().err, folder


def logs_in(*folders: Path) -> list[Path]:
    return [p for folder in folders if folder.is_dir() for p in folder.rglob("*")
            if p.suffix in (".sqlite", ".lock") or p.name.endswith((".sqlite.lock", ".db"))]


def assert_kept_the_promise(argv: list[str], capsys) -> None:
    kind, code, err, folder = outcome(argv, capsys)
    try:
        _kept_the_promise(argv, kind, code, err, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _kept_the_promise(argv: list[str], kind: str, code: int | None, err: str, folder: Path) -> None:
    if kind == "started":
        return
    assert "Traceback" not in err, (argv, err[-3000:])
    if code == 0:  # a command that did its job (a listing, a help text)
        return
    assert code == 2, (argv, code, err[-1500:])  # else bad input: one line, no log left
    errors = [line for line in err.splitlines() if line.startswith("tui-eval: error: ")]
    assert len(errors) == 1, (argv, err[-1500:])
    assert logs_in(folder, FOLDER) == [], (argv, err[-500:])


CHECKPOINTS = st.sampled_from([str(CARTPOLE), NO_SUCH_PATH, str(FOLDER), str(FOLDER / "empty.py"), "", "x" * 5000,
                               "ñandú✓"])
RUNS = st.sampled_from([NO_SUCH_PATH, str(FOLDER), str(FOLDER / "empty.py"), "", "x" * 5000, "ñandú✓", "/dev/null",
                        "newest"])


@pytest.mark.usefixtures("stop_at_start")
@FUZZ
@given(data=st.data())
def test_run_command_lines(data, capsys):
    from tui_eval.commands.run import build_parser

    argv = data.draw(option_sets(build_parser(), hostile_values(FOLDER), CHECKPOINTS, ("--headless",)))
    assert_kept_the_promise(argv, capsys)


@pytest.mark.usefixtures("stop_at_start")
@FUZZ
@given(data=st.data(), name=st.sampled_from(["attach", "ls", "stop", "resume", "report", "sweep", "record",
                                             "diagnose"]))
def test_subcommand_lines(data, name, capsys):
    from tui_eval.cli import COMMANDS

    argv = data.draw(option_sets(parser_of(COMMANDS[name]), hostile_values(FOLDER), RUNS))
    assert_kept_the_promise([name, *argv], capsys)
