"""The process a path runs in: `python -m tui_eval.isolation.child SOCKET` (started by `process_path.ProcessPath`;
a fresh interpreter: nothing of the run's process is inherited but what is passed over the socket).

It builds the path as a Ray worker does (`PathWorker`: the user's imports, `load_kind(spec)`, the path) and
serves the pipe: seeds offered, hold/release, explore, frames wanted, cancel, close. A pump thread sends
finished records (and the path's failure or frozen step) as they come, and the shown env's frames. When the
run's process goes away (the pipe closes), this process ends too.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from typing import Any

from tui_eval.errors import first_line
from tui_eval.isolation.pace import GATHER_S, RecordSender
from tui_eval.long_lived import keep_built_objects
from tui_eval.paths.base import episodes_at_once

PROCESS_VARIABLE = "TUI_EVAL_PATH_PROCESS"  # set, to the path's name, in a path's own process
KEY_VARIABLE = "TUI_EVAL_PATH_KEY"  # the socket's key, hex, in the child's environment (read, then dropped)
PUMP_S = 0.1  # the pump looks at records left behind, a failure, frames and activity this often
FRAMES_S = 0.1  # new frames are sent at most this often
ACTIVITY_S = 1.0  # what the path is doing, sent this often when it changed (for a run that waits on it)


class _Wire:
    """The child's end of the pipe; sends from the main and the pump thread take turns."""

    def __init__(self, conn: Any):
        self.conn = conn
        self.lock = threading.Lock()

    def send(self, message: tuple[Any, ...]) -> None:
        with self.lock:
            self.conn.send(message)


def main(address: str, warm: str = "") -> None:
    """Import the `warm` modules (comma-separated: the heavy libraries the path will need, while the run still
    plans), connect to the run's process, take the path to build, build it, then serve the socket until closed."""
    import importlib
    from multiprocessing.connection import Client

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # Ray's atexit hooks run on a plain terminate
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the run's to handle
    for module in filter(None, warm.split(",")):
        try:
            importlib.import_module(module)
        except Exception:  # only a head start: the build says what is missing
            pass
    conn = Client(address, family="AF_UNIX", authkey=bytes.fromhex(os.environ.pop(KEY_VARIABLE)))
    verb, spec, name, explore, setup = conn.recv()
    os.environ[PROCESS_VARIABLE] = name if verb == "build" else verb  # a path's own process says so, to user code too
    for entry in reversed(setup.get("sys_path", [])):  # the run's modules (the user's, --import) as it sees them
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if verb == "check":  # the paths' policies on the same observations (tui_eval/isolation/check_serve.py)
        from tui_eval.isolation.check_serve import serve_check

        serve_check(conn, spec, name, setup)
        return
    serve(conn, spec, name, explore, setup)


def serve(conn: Any, spec: Any, name: str, explore: bool, setup: dict[str, Any]) -> None:
    """Build the path, then serve the connection until closed."""
    wire = _Wire(conn)
    try:
        worker = _build(spec, name, explore, setup)
    except BaseException as exc:  # any failure to load is the run's to report, in one line
        from tui_eval.errors import BadInput

        said = isinstance(exc, BadInput)  # already the user's one line: sent without its type's name
        line = (str(exc).strip().splitlines() or [""])[0][:300] if said else first_line(exc, 300)
        wire.send(("load_failed", line, traceback.format_exc(), said))
        return
    keep_built_objects()
    path = worker.path
    sender = RecordSender(wire, worker, max(2, episodes_at_once(path) // 2))
    worker.on_record = sender.on_record
    wire.send(("loaded", {"pid": os.getpid(), "description": path.description,
                          "capacity": episodes_at_once(path), "frames_problem": path.frames_problem}))
    threading.Thread(target=_pump, args=(wire, worker, sender), name="pump", daemon=True).start()
    _serve_commands(wire, worker, sender)


def _build(spec: Any, name: str, explore: bool, setup: dict[str, Any]) -> Any:
    from tui_eval.frames.hub import FrameHub
    from tui_eval.isolation.worker import PathWorker

    hub = FrameHub()
    return PathWorker(spec, name, explore, setup["cwd"], setup["threads"], tuple(setup["keep_apart"]),
                      frames=hub.tap(name), in_ray=False)


def _serve_commands(wire: _Wire, worker: Any, sender: RecordSender) -> None:
    from tui_eval.isolation.frames_relay import apply_wanted

    while True:
        try:
            message = wire.conn.recv()
        except (EOFError, OSError):  # the run's process is gone
            orphaned_exit()
        command, args = message[0], message[1:]
        if command == "offer":  # (seeds, whether no seed follows them)
            sender.dry = args[1]
            worker.offer(args[0])
        elif command == "dry":
            sender.dry = True
        elif command == "hold":
            wire.send(("reply", args[0], worker.hold()))
        elif command == "release":
            worker.release()
        elif command == "set_explore":
            worker.set_explore(args[1])
            wire.send(("reply", args[0], None))
        elif command == "frames":
            apply_wanted(worker.frames.hub, worker.frames, args[0])
        elif command == "cancel":
            worker.cancel()
        elif command == "close":
            try:
                worker.close()
            finally:
                wire.send(("reply", args[0], None))
            return


def _pump(wire: _Wire, worker: Any, sender: RecordSender) -> None:
    """Records the episode thread left behind (tui_eval/isolation/pace.py), a failure or a frozen step, the shown env's
    new frames and what the path is doing, a few times a second."""
    from tui_eval.engine.stall import what_it_does
    from tui_eval.isolation.frames_relay import FrameSender
    frames = FrameSender(worker.frames.hub, worker.frames)
    next_frames = next_activity = 0.0
    said: str | None = None
    try:
        while True:
            time.sleep(PUMP_S)
            now = time.monotonic()
            if now - sender.sent_at >= GATHER_S and sender.flush(now):
                return
            if now >= next_frames:
                next_frames = now + FRAMES_S
                news = frames.news()
                if news is not None:
                    wire.send(("frames", news))
            if now >= next_activity:
                next_activity = now + ACTIVITY_S
                doing = what_it_does(worker.path)
                if doing != said:
                    said = doing
                    wire.send(("activity", doing))
    except (EOFError, OSError, BrokenPipeError):  # the run's process is gone
        orphaned_exit()


def orphaned_exit() -> None:
    """End this process, whose run's process went away without ending it (killed): the output file it would have
    removed goes too where nothing was written to it (the file is stdout's, from tui_eval/isolation/process_path.py
    or zygote.py)."""
    try:
        output = os.readlink("/proc/self/fd/1")
        if output.startswith("/") and os.path.getsize(output) == 0:
            os.unlink(output)
    except OSError:  # not Linux, or stdout is not a file
        pass
    os._exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:3])
