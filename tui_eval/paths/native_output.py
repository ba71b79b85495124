"""Keeping what native libraries print on descriptor 1 off the user's terminal and out of `--json` output.

PyBullet (panda-gym) prints its connection options from C each time an env is made. Python-level
output is untouched outside the `with` block; inside it, descriptor 1 points at /dev/null. The live app
draws on a duplicate of descriptor 2 (see runtime/app_process.py), so it is not affected.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_saved_fd: int | None = None


def _flush_c_stdio() -> None:
    """Write out C stdio buffers now, while they still go where they were meant to."""
    with contextlib.suppress(Exception):  # no libc (an exotic platform): nothing buffered to lose
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def native_stdout_quiet() -> Iterator[None]:
    """Point descriptor 1 at /dev/null for the block (nested and concurrent blocks share one redirect)."""
    global _depth, _saved_fd
    with _lock:
        if _depth == 0:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            _flush_c_stdio()
            devnull = os.open(os.devnull, os.O_WRONLY)
            _saved_fd = os.dup(1)
            os.dup2(devnull, 1)
            os.close(devnull)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved_fd is not None:
                _flush_c_stdio()  # the library's buffered lines go to /dev/null, not later to the terminal
                os.dup2(_saved_fd, 1)
                os.close(_saved_fd)
                _saved_fd = None
