"""`--headless`: the run driven without a UI (Ctrl-C, SIGTERM and a dropped terminal handled), followed to
its end (its progress and events in the words of the headless view, `tui_eval.headless`), then ended: by
`runtime/finish.py` as every run, or here when its log took no more episodes."""

from __future__ import annotations

import queue
import signal
import sqlite3
import sys
import time
from typing import TextIO

from tui_eval.engine.core import Engine
from tui_eval.engine.decide import gate_exit_code
from tui_eval.engine.stall import EngineSilence
from tui_eval.errors import EXIT_DIFFER, EXIT_INTERRUPTED, EXIT_OK, EXIT_PATH_FAILED, EXIT_TERMINATED
from tui_eval.headless import ModuleMeans, show_event, status_line
from tui_eval.log.lifecycle import EngineState, RunStatus
from tui_eval.records import Event
from tui_eval.views.snapshot import engine_snapshot

from .finish import finish
from .owner import RunOwner


def run_headless(engine: Engine, *, owner: RunOwner | None = None, json_path: str | None = None,
                 fail_on_differ: bool = False, out: TextIO | None = None, err: TextIO | None = None,
                 report_path: str | None = None) -> int:
    """Run `engine` to its end with progress on `err`; the summary table on `out` (and the report drawn into
    `report_path`). Returns the exit code. `out`/`err` default to the streams of the moment of the call (not of
    the import: a test may swap them)."""
    out, err = out or sys.stdout, err or sys.stderr
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
    restore = None
    if owner is not None:  # the terminal may go (SSH drop): then the run goes on, its output to a file
        restore = owner.install_signals(on_hangup=owner.detach_from_terminal)
    try:
        engine.start()
        follow(engine, events, err)
    finally:
        signal.signal(signal.SIGINT, previous)
        engine.close()
    if engine.log_failure is not None:
        if restore is not None:
            restore()
        return stop_without_room(engine, owner, err)
    try:
        end = finish(engine, owner, completed=not engine.stop_requested, interrupted=bool(interrupted),
                     json_path=json_path, out=out, err=err, report_path=report_path)
    finally:  # the handlers stay until the run's end is written (a hangup meanwhile still detaches it)
        if restore is not None:
            restore()
    if interrupted:
        return EXIT_INTERRUPTED
    if owner is not None and owner.terminated:
        return EXIT_TERMINATED
    if end.given_up:
        return EXIT_PATH_FAILED
    gate = gate_exit_code(end.summary)  # --fail-if-worse: 0 / 3 / 5
    if gate is not None:
        return gate
    if fail_on_differ and (end.summary.get("comparison") or {}).get("verdict") == "differ":
        return EXIT_DIFFER
    return EXIT_OK


#: seconds between two progress lines: redrawn in place on a terminal (True), a line of its own elsewhere (False)
DRAW_EVERY_S = {True: 0.5, False: 5.0}


def follow(engine: Engine, events: queue.Queue[Event], err: TextIO) -> None:
    """Progress on `err` until every path finished: a line redrawn in place on a terminal, else every 5 s."""
    tty = err.isatty()
    last_draw = 0.0
    silence = EngineSilence(engine)
    modules = ModuleMeans(list(engine.paths))  # multi-agent runs: each module's mean per path
    while engine.state != EngineState.DONE:
        try:
            event = events.get(timeout=0.2)
        except queue.Empty:
            event = None
        if event is not None:
            silence.on_event(event)
            show_event(event, modules, err)
        now = time.monotonic()
        if now - last_draw >= DRAW_EVERY_S[tty]:
            last_draw = now
            err.write(("\r" if tty else "") + status_line(engine_snapshot(engine), modules, silence.lines())
                      + ("" if tty else "\n"))
            err.flush()
    engine.wait()
    while not events.empty():  # what the last episodes sent as the run ended belongs in the last line
        show_event(events.get_nowait(), modules, err)
    err.write(("\r" if tty else "") + status_line(engine_snapshot(engine), modules) + "\n")


def stop_without_room(engine: Engine, owner: RunOwner | None, err: TextIO) -> int:
    """The log could take no more episodes (a full disk, a file-size limit): it holds every episode that finished
    before, the run stops there, and `resume` goes on from it once there is room."""
    err.write(f"tui-eval: error: the run's log {engine.log.path} could not be written ({engine.log_failure}); the "
              f"episodes before are kept: make room, then tui-eval resume {engine.log.path}\n")
    err.flush()
    if owner is not None:
        try:
            owner.close(RunStatus.INTERRUPTED, error=f"log not written: {engine.log_failure}")
        except sqlite3.Error:  # not even the status fits: the run reads back as interrupted (process gone)
            owner.let_go()
    return EXIT_INTERRUPTED
