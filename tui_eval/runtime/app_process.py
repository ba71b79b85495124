"""The process around the live app: libraries' stderr kept off the screen, the terminal's loss survived,
and after the app the summary on stdout. (The app itself is a view: `tui_eval.ui`.)

When the terminal goes (SSH drop, `tmux kill-session`: SIGHUP), the app leaves and the run carries on
as if started with `--detach`: its output goes to `<log>.out.txt`, `tui-eval attach` opens it again,
and only `q` in an attached app, `tui-eval stop` or SIGTERM end it.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from tui_eval.engine.decide import gate_exit_code
from tui_eval.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_PATH_FAILED, EXIT_TERMINATED
from tui_eval.log.lifecycle import EngineState, RunMeta, RunStatus
from tui_eval.outputs import stderr_path
from tui_eval.runtime.finish import finish
from tui_eval.runtime.owner import RunOwner


@contextlib.contextmanager
def library_output_to(path: Path) -> Iterator[None]:
    """Keep libraries' stderr (ray, torch, gymnasium warnings; C-level writes too) off the app's screen.

    Textual draws on `sys.__stderr__`; we give it a duplicate of the terminal's descriptor and point
    descriptor 2 at a file next to the run log for as long as the app runs.
    """
    original_stream = sys.__stderr__
    if original_stream is None or not original_stream.isatty():
        yield
        return
    saved_fd = os.dup(2)
    terminal = io.TextIOWrapper(io.FileIO(os.dup(2), "w"), encoding=original_stream.encoding or "utf-8",
                                errors="backslashreplace", line_buffering=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    sink = open(path, "a")
    sys.stderr.flush()
    os.dup2(sink.fileno(), 2)
    setattr(sys, "__stderr__", terminal)  # noqa: B010  (a final name to mypy; Textual draws on it)
    try:
        yield
    finally:
        setattr(sys, "__stderr__", original_stream)  # noqa: B010
        with contextlib.suppress(Exception):  # the terminal may be gone (SIGHUP)
            sys.stderr.flush()
        os.dup2(saved_fd, 2)
        os.close(saved_fd)
        with contextlib.suppress(Exception):
            terminal.close()
        sink.close()
        with contextlib.suppress(OSError):
            if path.stat().st_size == 0:
                path.unlink()


def finish_live(app, code: int, out=None, err=None, owner: RunOwner | None = None) -> int:
    """After the app: wait for the engine to stop, print the summary table, close the log. Returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    engine = app.engine
    if engine is None:
        if app.load_error is not None:
            err.write(f"tui-eval: error: {app.load_error}\n")
            if owner is not None:
                owner.close(RunStatus.FAILED, error=app.load_error)
            return app.load_exit_code
        if owner is not None:
            owner.close(RunStatus.STOPPED)
        return code
    was_done = getattr(app, "finished_before_quit", engine.state == EngineState.DONE)
    engine.stop()
    if not engine.wait(timeout=2.0):
        err.write("waiting for the paths to stop (finished episodes are already in the log)…\n")
        err.flush()
        engine.wait(timeout=60.0)
    engine.close()
    end = finish(engine, owner, completed=was_done, interrupted=code == EXIT_INTERRUPTED, json_path=app.plan.spec.json,
                 out=out, err=err, say_log=True, report_path=app.plan.spec.report)
    if end.given_up and code == 0:
        return EXIT_PATH_FAILED
    gate = gate_exit_code(end.summary)  # --fail-if-worse: 0 / 3 / 5
    return gate if gate is not None and code == 0 else code


def run_app(plan, owner: RunOwner | None = None, frames=None) -> int:
    """`tui-eval CKPT`: the live app; after it exits, the summary table on stdout. Returns the exit code."""
    from tui_eval.ui.app import EvalApp

    app = EvalApp(plan, on_hangup=None if owner is None else owner.mark_hung_up,
                  on_terminate=None if owner is None else owner.mark_terminated,
                  on_engine=None if owner is None else owner.serve, frames=frames)
    stderr_file = stderr_path(plan.log_path)
    with library_output_to(stderr_file):
        try:
            code = app.run()
        except Exception:  # drawing on a terminal that is gone may fail; the run is what matters
            if owner is None or not owner.hung_up:
                raise
            code = EXIT_OK
    if code is None:  # the app died before it could choose (Textual printed why)
        code = 1
    if owner is not None and owner.hung_up:
        return _carry_on_detached(app, owner)
    if owner is not None and owner.terminated:
        code = EXIT_TERMINATED
    try:
        return finish_live(app, code, owner=owner)
    finally:
        if stderr_file.is_file():
            sys.stderr.write(f"library output during the run: {stderr_file}\n")


def _carry_on_detached(app, owner: RunOwner) -> int:
    """The terminal is gone: go on without a view until the run ends (or is stopped), then close it."""
    owner.detach_from_terminal()
    owner.install_signals()  # the app's handlers left with it; a second SIGHUP must not kill the run
    engine = app.engine
    if engine is None:  # the terminal went while the checkpoint was loading: nothing runs yet
        owner.close(RunStatus.STOPPED)
        return EXIT_OK
    while not engine.wait(timeout=0.5):
        pass
    engine.close()
    finish(engine, owner, completed=not engine.stop_requested, json_path=app.plan.spec.json,
           out=sys.stdout, err=sys.stderr, report_path=app.plan.spec.report)  # both into <log>.out.txt
    return EXIT_TERMINATED if owner.terminated else EXIT_OK


def _wait_while_loading(log: Path, timeout: float = 600.0) -> None:
    """A live run still loading its checkpoint has no paths or controls yet: wait for them."""
    from tui_eval.log.store import RunLog
    from tui_eval.runtime import log_lock

    deadline = time.monotonic() + timeout
    said = False
    while log_lock.holder(log) is not None and time.monotonic() < deadline:
        meta = RunMeta.read(RunLog(log, readonly=True))
        if meta.status != RunStatus.LOADING and meta.control:
            return
        if not said:
            sys.stderr.write(f"run {log.stem} is loading its checkpoint; waiting (Ctrl-C to give up)…\n")
            sys.stderr.flush()
            said = True
        time.sleep(0.2)


def run_viewer(log_path: str | Path, frames=None) -> int:
    """`tui-eval attach`: the same app over a run log (live or finished); a live run's controls work
    through its control channel."""
    from tui_eval.runtime import log_lock
    from tui_eval.runtime.control import ControlClient
    from tui_eval.ui.app import EvalApp

    control = ControlClient(log_path)
    _wait_while_loading(Path(log_path))
    live = log_lock.holder(log_path) is not None and control.available()
    app = EvalApp(log_path=log_path, control=control if live else None, frames=frames)
    code = app.run()
    return EXIT_OK if code is None else code
