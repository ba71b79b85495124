"""The run's side of the zygote (tui_eval/isolation/zygote.py): one per run's process, started while the run plans,
asked to fork each path's process. `ForkedProcess` is what `subprocess.Popen` is for a child of the run's own:
poll, wait, terminate, kill, with the exit status the zygote reports (negative: the signal that ended it)."""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Listener
from pathlib import Path
from typing import Any

from tui_eval.cpu_pools import limit_native_pools
from tui_eval.isolation.zygote import KEY_VARIABLE

READY_S = 900.0  # the zygote's imports (RLlib: ~7 s here, minutes on a loaded machine) before its first fork
FORK_S = 30.0  # a fork once it is ready
END_S = 3.0  # a zygote asked to end runs its exit hooks (~0.1 s); one that has not ended by then is killed


class ZygoteGone(RuntimeError):
    """The zygote ended (killed, or its imports failed): a fresh one is started for the next fork."""


class Zygote:
    def __init__(self, warm: tuple[str, ...]):
        self.warm = warm
        self._folder = tempfile.mkdtemp(prefix="tui-eval-zygote-")
        key = secrets.token_bytes(16)
        self._listener = Listener(os.path.join(self._folder, "socket"), family="AF_UNIX", authkey=key)
        self.output_file = os.path.join(tempfile.gettempdir(), f"tui-eval-zygote-{os.getpid()}.log")
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, **{KEY_VARIABLE: key.hex()},
                   PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
        limit_native_pools(env)
        with open(self.output_file, "ab") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tui_eval.isolation.zygote", str(self._listener.address), ",".join(warm)],
                env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
        self._conn: Any = None
        self._lock = threading.Lock()  # one fork at a time
        self._changed = threading.Condition()
        self._forked: dict[int, int] = {}  # request -> pid
        self._exited: dict[int, int] = {}  # pid -> exit code (negative: killed by that signal)
        self._requests = 0
        self._gone = False
        threading.Thread(target=self._read, name="zygote-pipe", daemon=True).start()

    @property
    def alive(self) -> bool:
        return not self._gone and self.process.poll() is None

    def _read(self) -> None:
        try:
            self._conn = self._listener.accept()
            with self._changed:
                self._changed.notify_all()
            while True:
                message = self._conn.recv()
                with self._changed:
                    if message[0] == "forked":
                        self._forked[message[1]] = message[2]
                    elif message[0] == "exited":
                        self._exited[message[1]] = message[2]
                    self._changed.notify_all()
        except (EOFError, OSError):
            pass
        with self._changed:
            self._gone = True
            self._changed.notify_all()

    def fork(self, address: str, key_hex: str, output_file: str) -> ForkedProcess:
        """A path's process, forked, connecting to `address` with `key_hex`, its output into `output_file`."""
        with self._lock:
            self._wait_for(lambda: self._conn is not None, READY_S, "start")
            self._requests += 1
            request = self._requests
            try:
                self._conn.send(("fork", request, address, key_hex, dict(os.environ), output_file))
            except OSError:  # it died since it was last seen alive
                raise ZygoteGone(f"the path processes' zygote ended; {output_note(self.output_file)}") from None
            self._wait_for(lambda: request in self._forked, FORK_S, "fork")
            return ForkedProcess(self, self._forked.pop(request))

    def _wait_for(self, condition: Any, seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        with self._changed:
            while not condition():
                if self._gone or self.process.poll() is not None:
                    raise ZygoteGone(f"the path processes' zygote ended; {output_note(self.output_file)}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ZygoteGone(f"the path processes' zygote did not {what} within {seconds:g}s")
                self._changed.wait(min(left, 0.5))

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """The child's exit code once it ended (waiting up to `timeout` seconds), else None."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while pid not in self._exited:
                if self._gone or self.process.poll() is not None:
                    return None if _exists(pid) else -signal.SIGKILL  # its status went with the zygote
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._changed.wait(0.5 if left is None else min(left, 0.5))
            return self._exited[pid]

    def end(self) -> None:
        """Ask the zygote to end (its exit hooks: tui_eval/isolation/zygote.py), killed if it has not within `END_S`
        (or if it is still importing)."""
        asked = self._conn is not None and self._lock.acquire(timeout=END_S)  # not within a fork's messages
        if asked:
            try:
                self._conn.send(("end",))
            except OSError:  # gone already
                pass
            finally:
                self._lock.release()
        close_ends(self._conn, self._listener)
        wait_quietly(self.process, END_S if asked else 0.0)
        if self.process.poll() is None:
            self.process.kill()
            try:
                self.process.wait(1.0)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self._folder, ignore_errors=True)
        if self.process.poll() is not None:
            remove_output(self.output_file)


def output_note(output_file: str) -> str:
    """Where a process's output is, for a message that says it ended: the file (then kept: `remove_output`), or that
    it wrote none."""
    try:
        wrote = os.path.getsize(output_file) > 0
    except OSError:
        wrote = False
    if wrote:
        _cited.add(output_file)
    return f"its output: {output_file}" if wrote else "it wrote no output"


_cited: set[str] = set()  # output files a message named


def remove_output(output_file: str) -> None:
    """A process's output file, once it has ended, unless a message named it (`output_note`: a process that died).
    A run starts one a path process, and one for its zygote; what lands there of a clean run is a library's chatter
    at import (pybullet's build time) or nothing."""
    if output_file in _cited:
        return
    try:
        os.unlink(output_file)
    except OSError:  # gone already
        pass


def close_ends(*ends: Any) -> None:
    """Close a socket's ends (a connection, a listener), those that are open."""
    for end in ends:
        try:
            if end is not None:
                end.close()
        except OSError:
            pass


def end_session(pid: int) -> None:
    """Kill what the process started in its session (its own from its start): a local Ray's GCS, raylet, agents
    and workers. Killed with their driver alone, Ray's agents lived on for a minute at a few % of a core each."""
    if hasattr(os, "killpg"):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # nothing left in it
            pass


def wait_quietly(process: Any, seconds: float) -> None:
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        pass


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ForkedProcess:
    """A path's process forked by the zygote, handled as a `subprocess.Popen`."""

    def __init__(self, zygote: Zygote, pid: int):
        self.zygote, self.pid = zygote, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.zygote.exit_code(self.pid, timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


_zygote: Zygote | None = None
_zygote_lock = threading.Lock()


def zygote(warm: tuple[str, ...]) -> Zygote:
    """This process's zygote, started with `warm` imported when there is none alive (it ends at exit, whichever
    command started it: a run's paths, a check, the doctor's)."""
    global _zygote
    with _zygote_lock:
        if _zygote is None or not _zygote.alive:
            if _zygote is not None:
                _zygote.end()
            _zygote = Zygote(warm)
            atexit.unregister(end_zygote)
            atexit.register(end_zygote)
        return _zygote


def end_zygote() -> None:
    global _zygote
    with _zygote_lock:
        if _zygote is not None:
            _zygote.end()
            _zygote = None
