"""Driving a real terminal: tmux sessions whose screen the tests read."""

from __future__ import annotations

import subprocess
import time


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=30).stdout


def screen(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session)


def wait_screen(session: str, condition, timeout: float = 120.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = screen(session)
        if condition(text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"screen never matched; last screen:\n{text}")
