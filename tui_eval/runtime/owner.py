"""What every run process does around its engine, whatever view it has (headless, the app, detached):
hold its log, list itself, serve its control channel, keep its state in the log, and end truthfully.

Status in the log: `loading` → `running` → `done` | `stopped` (stop, SIGTERM, q before the end) |
`interrupted` (Ctrl-C) | `failed` (a path given up, or nothing could load). A run whose process is
gone while its log says `loading`/`running` is read back as `interrupted` with `process gone`.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.engine.core import Engine
from tui_eval.local_ray import ray_running, stop_ray
from tui_eval.log.lifecycle import EngineState, RunMeta, RunStatus
from tui_eval.log.store import RunLog
from tui_eval.outputs import check_outputs, output_path
from tui_eval.records import BlockStarted, EpisodeFinished, Event, PathFailed, PathNotice, StateChanged
from tui_eval.views.format import workers_line

from . import log_lock, run_registry
from .control import ChannelServer, ControlServer

VERDICT_EVERY_S = 5.0  # how often a live run writes its current verdict for `tui-eval ls`


class RunOwner:
    """Holds one run's log for this process: taken once the checkpoint is read and the run planned, before any
    path is loaded (bad input until then leaves no log)."""

    def __init__(self, spec: RunSpec, *, resuming: bool = False):
        if not resuming:
            check_outputs(spec)
        self.spec = spec
        # A run in a process where Ray already runs (a Python session, a test) leaves that Ray up at its end:
        # what started it may still be using it.
        self._ray_was_up = ray_running()
        self.log_path = Path(spec.log or "")
        self.lock = log_lock.claim(self.log_path, resuming=resuming)
        if not resuming:  # the run exists (and is listed) from now on, even if loading fails
            RunMeta(spec=spec.to_json(), checkpoint=spec.checkpoint, status=RunStatus.LOADING,
                    started_at=time.time(), pid=os.getpid()).write(RunLog(self.log_path))
        run_registry.register(self.log_path)
        self.control: ChannelServer | None = None
        self.engine: Engine | None = None
        self.restore_from: tuple[list, list] | None = None  # (blocks, records) when resuming
        self.terminated = False  # SIGTERM: stop cleanly
        self.hung_up = False  # SIGHUP: the terminal is gone; the run goes on without a view
        self._verdict_at = 0.0
        self._incidents: list[dict[str, Any]] = []  # every restart, loss and wait, as it happens

    # ------------------------------------------------------------------ while running
    def serve(self, engine: Engine) -> None:
        """Open the control channel and keep the run's state in its log while it runs."""
        self.engine = engine
        if self.restore_from is not None:
            engine.restore(*self.restore_from)
        self._incidents = list(engine.log.meta().get("incidents") or [])  # a resumed run keeps the earlier ones
        self.control = ControlServer(engine, self.log_path)
        RunMeta(pid=os.getpid(), control=str(self.control.path), state=EngineState.LOADING,
                blocks=[[b.start, b.stop] for b in engine.blocks],
                explore={n: engine.explore_of(n) for n in engine.paths},
                workers=workers_line(engine.paths)).write(engine.log)
        engine.subscribe(self._persist)

    def _persist(self, event: Event) -> None:
        engine = self.engine
        assert engine is not None
        if isinstance(event, StateChanged):
            RunMeta(state=EngineState(event.state)).write(engine.log)
        elif isinstance(event, PathFailed):  # a Ray worker replaced: where the paths run now
            kind = "given up" if event.gave_up else f"failed, restart {event.restarts}"
            self._incidents.append({"at": time.time(), "path": event.path, "kind": kind, "message": event.message})
            RunMeta(workers=workers_line(engine.paths), incidents=self._incidents).write(engine.log)
        elif isinstance(event, PathNotice):
            self._incidents.append({"at": time.time(), "path": event.path, "kind": "notice", "message": event.message})
            RunMeta(workers=workers_line(engine.paths), incidents=self._incidents).write(engine.log)
        elif isinstance(event, BlockStarted):
            RunMeta(blocks=[[b.start, b.stop] for b in engine.blocks],
                    explore={n: engine.explore_of(n) for n in engine.paths}).write(engine.log)
        elif isinstance(event, EpisodeFinished) and time.monotonic() - self._verdict_at > VERDICT_EVERY_S:
            self._verdict_at = time.monotonic()
            self._write_snapshot(engine)

    @staticmethod
    def _write_snapshot(engine: Engine) -> None:
        """The current numbers, for `ls` (the verdict) and for a viewer while it reads a long log."""
        paths, comparison = engine.snapshot()
        saved = None if comparison is None else comparison.to_json()
        # set_meta directly: a verdict of None is written (no comparison yet), not left out
        engine.log.set_meta(verdict=None if comparison is None else comparison.verdict,
                            snapshot={"paths": paths, "comparison": saved})

    def install_signals(self, on_term: Callable[[], object] | None = None,
                        on_hangup: Callable[[], object] | None = None) -> Callable[[], None]:
        """SIGTERM stops the run cleanly; SIGHUP (the terminal closed) lets it go on without a view.
        Returns what puts the previous handlers back (a run inside a longer-lived process must not leave
        its handlers, which would redirect that process's output on a later hangup)."""

        def term(signum, frame):
            self.terminated = True
            if self.engine is not None:
                self.engine.stop()
            if on_term is not None:
                on_term()

        def hangup(signum, frame):
            if self.hung_up:
                return
            self.hung_up = True
            if on_hangup is not None:
                on_hangup()

        previous = {signum: signal.signal(signum, handler)
                    for signum, handler in ((signal.SIGTERM, term), (signal.SIGHUP, hangup))}

        def restore() -> None:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

        return restore

    def mark_hung_up(self) -> None:
        """The app saw its terminal go (its own SIGHUP handler): the run goes on without a view."""
        self.hung_up = True

    def mark_terminated(self) -> None:
        """The app saw SIGTERM: the run stops cleanly."""
        self.terminated = True

    def detach_from_terminal(self) -> Path:
        """Point stdin/stdout/stderr away from a terminal that is gone (writes to it would fail)."""
        out = output_path(self.log_path)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        devnull = os.open(os.devnull, os.O_RDONLY)
        for std in (1, 2):
            os.dup2(fd, std)
        os.dup2(devnull, 0)
        os.close(fd)
        os.close(devnull)
        sys.stdout = open(1, "w", closefd=False, buffering=1)
        sys.stderr = open(2, "w", closefd=False, buffering=1)
        return out

    # ------------------------------------------------------------------ the end
    def let_go(self) -> None:
        """Stop serving and let the log go without writing to it (it can take nothing more: no room)."""
        if self.control is not None:
            self.control.close()
        self.lock.release()
        if not self._ray_was_up:
            stop_ray()

    def close(self, status: RunStatus, *, error: str | None = None) -> None:
        """Write the run's final status, stop serving, let the log go and stop the local Ray (if this run's)."""
        end = RunMeta(status=status, finished_at=time.time(), error=error)
        if self.engine is not None:
            self._write_snapshot(self.engine)
            dataclasses.replace(end, state=EngineState.DONE).write(self.engine.log)
        elif self.log_path.is_file():
            end.write(RunLog(self.log_path))
        if self.control is not None:
            self.control.close()
        self.lock.release()
        if not self.log_path.is_file():  # nothing was ever written: leave nothing behind
            log_lock.lock_path(self.log_path).unlink(missing_ok=True)
        if not self._ray_was_up:
            stop_ray()
