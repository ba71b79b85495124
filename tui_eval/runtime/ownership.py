"""One writer per log: a run holds an exclusive lock on `<log>.lock` for as long as its process lives.

The kernel drops the lock when the process dies however it dies (SIGKILL, OOM, reboot), so "held"
means "a live process owns this run", and a log marked running whose lock is free belongs to a run
whose process is gone (`tui-eval resume` continues it).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from tui_eval.config.spec import BadInput


def lock_path(log: str | Path) -> Path:
    return Path(f"{log}.lock")


class LogLock:
    """The held lock of one run's log; `release()` (or process exit) lets it go."""

    def __init__(self, log: str | Path, fd: int):
        self.log = Path(log)
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def holder(log: str | Path) -> dict | None:
    """Who holds the log ({"pid", "name"}), or None when no live process does."""
    path = lock_path(log)
    if not path.is_file():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                return json.loads(path.read_text() or "{}")
            except (OSError, ValueError):
                return {"pid": "?", "name": Path(log).stem}
        return None
    finally:
        os.close(fd)


def claim(log: str | Path, *, resuming: bool = False) -> LogLock:
    """Take the log for this process, or BadInput naming the run that holds it (or that finished in it)."""
    log = Path(log)
    fd = os.open(lock_path(log), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        owner = holder(log) or {}
        raise BadInput(f"log {log} is in use by run {owner.get('name', log.stem)!r} (pid {owner.get('pid', '?')}); "
                       f"choose another --log, or tui-eval attach / stop {owner.get('name', log.stem)}") from None
    if not resuming and log.is_file() and log.stat().st_size > 0:
        os.close(fd)
        raise BadInput(f"log {log} already holds a run; choose a new --log (or tui-eval resume {log} to "
                       "continue that run)")
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid(), "name": log.stem}).encode())
    return LogLock(log, fd)
