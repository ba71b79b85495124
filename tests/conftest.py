"""Shared fixtures: the bundled demo checkpoints, a fresh run directory, and helpers to run the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
CARTPOLE = ASSETS / "ppo_cartpole"
PENDULUM = ASSETS / "ppo_pendulum"

from tui_eval.local_ray import prepare_environment  # noqa: E402  (before ray is imported, as the CLI does)

prepare_environment()
# runs started by the tests are listed in a registry of their own, not the user's
os.environ.setdefault("TUI_EVAL_STATE", tempfile.mkdtemp(prefix="tui-eval-state-"))
sys.path.insert(0, str(ROOT / "tests"))


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """Run each CLI invocation from an empty directory (logs land under it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(*args: str, cwd: Path | None = None, timeout: float = 240, env: dict | None = None):
    """Run `python -m tui_eval.cli ARGS` in a subprocess and return the CompletedProcess."""
    full_env = dict(os.environ, PYTHONPATH=f"{ROOT}:{ROOT / 'tests'}", **(env or {}))
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


@pytest.fixture(scope="session")
def zoo(tmp_path_factory) -> Path:
    """The connector zoo (tests/zoo_connectors.py): tiny real PPO checkpoints, one per connector piece, space and
    module kind, trained once per session in a subprocess."""
    out = tmp_path_factory.mktemp("zoo")
    env = dict(os.environ, PYTHONPATH=f"{ROOT}:{ROOT / 'tests'}")
    proc = subprocess.run([sys.executable, "zoo_connectors.py", str(out)], cwd=ROOT / "tests", env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture
def apps():
    """Apps made by a test; their engines are stopped even when the test fails."""
    made = []
    yield made
    for app in made:
        if app.engine is not None:
            app.engine.stop()
            app.engine.wait(30)
            app.engine.close()
