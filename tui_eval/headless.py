"""The view without a UI: a progress line on stderr, the summary table on stdout, `--json` on request."""

from __future__ import annotations

import json
import queue
import signal
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from tui_eval.engine import Engine
from tui_eval.events import BlockStarted, Event, PathFailed, PathNotice
from tui_eval.format import num, summary_table
from tui_eval.runtime.owner import EXIT_TERMINATED, RunOwner
from tui_eval.summary import build_summary

EXIT_OK, EXIT_DIFFER, EXIT_PATH_FAILED, EXIT_INTERRUPTED = 0, 3, 4, 130


def progress_line(engine: Engine) -> str:
    paths, comparison = engine.snapshot()
    parts = []
    for name, summary in paths.items():
        total = f"/{engine.episodes}" if engine.episodes else ""
        eps_s, _ = engine.throughput(name)
        parts.append(f"{name} {summary['episodes']}{total} mean {num(summary['mean'], 1)} ({eps_s:.1f} ep/s)")
    verdict = f" | {comparison.verdict}" if comparison is not None else ""
    return f"[{engine.active_seconds():6.1f}s] " + " | ".join(parts) + verdict


def run_headless(engine: Engine, *, owner: RunOwner | None = None, json_path: str | None = None,
                 fail_on_differ: bool = False, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    events: queue.Queue[Event] = queue.Queue()
    engine.subscribe(events.put)
    interrupted: list[float] = []

    def on_sigint(signum, frame):
        if interrupted:  # a second Ctrl-C: leave now, the log already holds what finished
            err.write("\ninterrupted twice: leaving now; finished episodes are in the log\n")
            err.flush()
            raise SystemExit(EXIT_INTERRUPTED)
        interrupted.append(time.monotonic())
        err.write("\ninterrupted: stopping (episodes in flight are dropped; Ctrl-C again to leave at once)\n")
        engine.stop()

    previous = signal.signal(signal.SIGINT, on_sigint)
    if owner is not None:  # the terminal may go (SSH drop): then the run goes on, its output to a file
        owner.install_signals(on_hangup=owner.detach_from_terminal)
    try:
        engine.start()
        _follow(engine, events, err)
    finally:
        signal.signal(signal.SIGINT, previous)
        engine.close()
    failed = record_failures(engine)
    status = ("interrupted" if interrupted else "stopped" if engine.stop_requested
              else "failed" if failed else "done")
    engine.log.set_meta(status=status, finished_at=time.time())
    summary = finish(engine, json_path)
    out.write(summary_table(summary) + "\n")
    out.flush()
    if owner is not None:
        owner.close(status)
    if interrupted:
        return EXIT_INTERRUPTED
    if owner is not None and owner.terminated:
        return EXIT_TERMINATED
    if report_given_up(failed, err):
        return EXIT_PATH_FAILED
    if fail_on_differ and (summary.get("comparison") or {}).get("verdict") == "differ":
        return EXIT_DIFFER
    return EXIT_OK


def _follow(engine: Engine, events: queue.Queue[Event], err: TextIO) -> None:
    """Progress on `err` until every path finished: a line redrawn in place on a terminal, else every 5 s."""
    tty = err.isatty()
    last_draw = 0.0
    while engine.state != "done":
        try:
            event = events.get(timeout=0.2)
        except queue.Empty:
            event = None
        if isinstance(event, PathFailed):
            err.write(f"\npath {event.path} failed ({event.message}); "
                      + ("giving up on it\n" if event.gave_up else f"loaded afresh (restart {event.restarts})\n"))
        elif isinstance(event, PathNotice):
            err.write(f"\npath {event.path}: {event.message}\n")
        elif isinstance(event, BlockStarted):
            err.write(f"\nseed block {event.index}: {event.block} ({event.reason})\n")
        now = time.monotonic()
        if now - last_draw >= (0.5 if tty else 5.0):
            last_draw = now
            err.write(("\r" if tty else "") + progress_line(engine) + ("" if tty else "\n"))
            err.flush()
    engine.wait()
    err.write(("\r" if tty else "") + progress_line(engine) + "\n")


def record_failures(engine: Engine) -> list[PathFailed]:
    """Keep every path failure (with its traceback) in the run's log; return the paths given up."""
    if engine.errors:
        engine.log.set_meta(path_errors=[{"path": e.path, "message": e.message, "gave_up": e.gave_up,
                                          "details": e.details} for e in engine.errors])
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


def finish(engine: Engine, json_path: str | None) -> dict[str, Any]:
    """The run's summary; written to `json_path` when given."""
    throughput = {name: engine.throughput(name) for name in engine.paths}
    summary = build_summary(engine.log.meta(), engine.stats, engine.log.records(), throughput)
    summary["log"] = str(engine.log.path)
    if json_path:  # its folder was checked before the run; never created here
        Path(json_path).write_text(json.dumps(summary, indent=1))
    return summary
