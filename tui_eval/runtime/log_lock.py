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

from tui_eval.errors import BadInput


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


def check_free(log: str | Path) -> None:
    """BadInput now when `log` could not be taken by a new run (in use, holding a run, not a run log); leaves
    nothing behind."""
    existed = lock_path(log).exists()
    claim(log).release()
    if not existed:
        lock_path(log).unlink(missing_ok=True)


def claim(log: str | Path, *, resuming: bool = False) -> LogLock:
    """Take the log for this process, or BadInput naming the run that holds it (or that finished in it)."""
    log = Path(log)
    existed = lock_path(log).exists()
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
        if not existed:  # refused: the lock made just now goes too
            lock_path(log).unlink(missing_ok=True)
        raise BadInput(taken_message(log))
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid(), "name": log.stem}).encode())
    return LogLock(log, fd)


SQLITE_HEADER = b"SQLite format 3\x00"


def taken_message(log: Path) -> str:
    """Why a new run cannot write to the existing file `log`: it holds a run, or it is some other file."""
    with log.open("rb") as fh:
        head = fh.read(len(SQLITE_HEADER))
    if head != SQLITE_HEADER:
        return f"--log {log} is not a run log (not an SQLite file); choose a new --log, a file that does not exist yet"
    if not _holds_run_table(log):
        return (f"--log {log} is not a run log (an SQLite file of another program); choose a new --log, "
                "a file that does not exist yet")
    return f"log {log} already holds a run; choose a new --log (or tui-eval resume {log} to continue that run)"


def _holds_run_table(log: Path) -> bool:
    import sqlite3

    try:
        db = sqlite3.connect(f"{log.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='run'").fetchone() is not None
        finally:
            db.close()
    except sqlite3.Error:
        return True  # an SQLite file it cannot read through: perhaps a damaged run log, which resume says more of
