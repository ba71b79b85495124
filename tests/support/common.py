"""The bundled demo checkpoints, the CLI in a subprocess, and a polling wait."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
CARTPOLE = ASSETS / "ppo_cartpole"
PENDULUM = ASSETS / "ppo_pendulum"
SUPPORT = ROOT / "tests" / "support"


def cli(*args: str, cwd: Path | None = None, timeout: float = 240, env: dict | None = None):
    """Run `python -m tui_eval.cli ARGS` in a subprocess and return the CompletedProcess; this checkout is
    importable there, the test modules as `tests.support.*`."""
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "tui_eval.cli", *map(str, args)], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=timeout, env=full_env)


def wait_until(condition, timeout: float = 60.0, interval: float = 0.05):
    """Poll `condition()` until it is truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s")


def episodes_in(log: Path) -> int:
    """Episodes a run's log holds so far; 0 while its writer has not created it (or its tables) yet."""
    import sqlite3

    from tui_eval.log.store import RunLog

    try:
        return RunLog(log, readonly=True).count()
    except (sqlite3.Error, OSError):
        return 0
