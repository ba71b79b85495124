"""The app in a real terminal: tmux runs `tui-eval demo`, we press keys and read the screen.

Both paths (ray starts), unbounded so it is still running when we press `p`; one session, read at
120×40 and then resized to 80×24.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.terminals import needs
from tests.support.tmux import screen, wait_screen

pytestmark = needs("tmux")

ROOT = Path(__file__).resolve().parents[2]
TUI_EVAL = Path(sys.executable).with_name("tui-eval")


@pytest.fixture
def session(tmp_path):
    name = f"tui-eval-test-{os.getpid()}"
    exe = TUI_EVAL if TUI_EVAL.exists() else f"{sys.executable} -m tui_eval.cli"
    command = (f"cd {tmp_path} && TERM=xterm-256color {exe} demo --num-envs 4 --log {tmp_path / 'run.sqlite'}; "
               f"echo EXIT=$?; sleep 60")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(["tmux", "new-session", "-d", "-x", "120", "-y", "40", "-s", name, command], check=True, env=env)
    yield name
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def verdict_on(text: str) -> bool:
    return any(word in text for word in ("DIFFER", "EQUIVALENT", "UNDECIDED"))


def test_demo_in_a_real_terminal(session, tmp_path):
    text = wait_screen(session, lambda t: "RUNNING" in t and "evaluate" in t and "connectors" in t
                       and verdict_on(t) and "Δ evaluate−connectors" in t, timeout=180)
    assert "comparison" in text and "episodes" in text

    subprocess.run(["tmux", "send-keys", "-t", session, "p"], check=True)
    text = wait_screen(session, lambda t: "PAUSED" in t, timeout=5)
    header = text.splitlines()[1]
    assert "PAUSED" in header

    subprocess.run(["tmux", "resize-window", "-t", session, "-x", "80", "-y", "24"], check=True)
    text = wait_screen(session, lambda t: max(len(line) for line in t.splitlines()) <= 80, timeout=10)
    time.sleep(0.5)
    text = screen(session)
    lines = text.splitlines()
    assert len(lines) <= 24
    assert "PAUSED" in lines[1]
    assert "evaluate" in text and "connectors" in text and verdict_on(text)
    assert "q quit" in text  # the footer still shows the keys

    subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
    text = wait_screen(session, lambda t: "EXIT=" in t, timeout=60)
    assert "EXIT=0" in text
    assert "verdict:" in text  # the summary table printed after the app left the screen
