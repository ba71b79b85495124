"""The end of a run, whatever its view (headless, the live app, a run carried on detached): the failures
and the final status into the log, the summary (and `--json`), the table on stdout, the report (`--report`),
the log let go, a line per path given up."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from tui_eval.engine.core import Engine
from tui_eval.errors import BadInput, first_line
from tui_eval.log.lifecycle import RunMeta, RunStatus, final_status
from tui_eval.records import PathFailed
from tui_eval.views.format import summary_table
from tui_eval.views.summary import build_summary

from .owner import RunOwner


@dataclass(frozen=True)
class RunEnd:
    """How the run ended: its status, its summary document, the paths given up."""

    status: RunStatus
    summary: dict[str, Any]
    given_up: list[PathFailed]


def finish(engine: Engine, owner: RunOwner | None, *, completed: bool, interrupted: bool = False,
           json_path: str | None, out: TextIO, err: TextIO, say_log: bool = False,
           report_path: str | None = None) -> RunEnd:
    """End the run of a stopped engine: `completed` it ran its episodes out (no stop asked first),
    `interrupted` by Ctrl-C. Writes the status, the summary (to `json_path` too), the table on `out`, the
    report (`report_path`), closes the run's owner, and says on `err` which paths were given up (and,
    `say_log`, where the log is)."""
    given_up = record_failures(engine)
    status = final_status(completed=completed, interrupted=interrupted, given_up=bool(given_up))
    RunMeta(status=status, finished_at=time.time()).write(engine.log)
    summary = summarise(engine, json_path)
    out.write(summary_table(summary) + "\n")
    out.flush()
    if report_path:  # before the owner lets go: a run seen ended has its report
        draw_report(engine.log.path, report_path, err)
    if say_log:
        err.write(f"log: {engine.log.path}\n")
    if owner is not None:
        owner.close(status)
    report_given_up(given_up, err)
    return RunEnd(status, summary, given_up)


def record_failures(engine: Engine) -> list[PathFailed]:
    """Keep every path failure (with its traceback) in the run's log; return the paths given up."""
    if engine.errors:
        RunMeta(path_errors=[{"path": e.path, "message": e.message, "gave_up": e.gave_up, "details": e.details}
                             for e in engine.errors]).write(engine.log)
    return [e for e in engine.errors if e.gave_up]


def report_given_up(failed: list[PathFailed], err: TextIO) -> bool:
    """One line per path given up: what failed, the error, what to try. True when there was one."""
    for failure in failed:
        err.write(f"tui-eval: path {failure.path} failed and was given up after {failure.restarts} tries: "
                  f"{failure.message}; {failure_hint(failure.message)}\n")
    err.flush()
    return bool(failed)


def failure_hint(message: str) -> str:
    """What to try, from the error a path failed with."""
    shape_words = ("dtype", "shape", "size mismatch", "mat1 and mat2", "expected scalar type", "must match")
    if any(word in message for word in shape_words):
        return ("the policy does not accept this env's observations: run the env it was trained on "
                "(--import the code that registers it, --env, --env-config)")
    return "tui-eval attach RUN --headless prints the traceback from the run's log"


def summarise(engine: Engine, json_path: str | None) -> dict[str, Any]:
    """The run's summary; written to `json_path` when given."""
    throughput = {name: engine.throughput(name) for name in engine.paths}
    summary = build_summary(engine.log.meta(), engine.stats, engine.log.records(), throughput)
    summary["log"] = str(engine.log.path)
    if json_path:  # its folder was checked before the run; never created here
        Path(json_path).write_text(json.dumps(summary, indent=1))
    return summary


def draw_report(log_path: str | Path, report_path: str, err: TextIO) -> None:
    """`--report`: the run's picture. Drawing it cannot lose the run (its log and summary are written): a failure
    is one line on `err`."""
    from tui_eval.report import write_report

    try:
        written = write_report(log_path, report_path)
    except Exception as exc:  # whatever went wrong, the run is kept: say what and go on
        err.write(f"tui-eval: the report was not written: {exc if isinstance(exc, BadInput) else first_line(exc)}\n")
    else:
        err.write(f"report: {written}\n")
    err.flush()
