"""Fixtures every test may use: a fresh run directory and the apps a test makes. Importing this first sets
up the process as the CLI does (before ray is imported) and gives the tests a run registry of their own."""

from __future__ import annotations

import os
import tempfile

import pytest

from tui_eval.local_ray import prepare_environment

prepare_environment()
# runs started by the tests are listed in a registry of their own, not the user's
os.environ.setdefault("TUI_EVAL_STATE", tempfile.mkdtemp(prefix="tui-eval-state-"))


def pytest_collection_finish(session):
    """A run that collects nothing is a broken layout or a wrong path, never a pass."""
    if not session.items and not session.config.option.collectonly:
        raise pytest.UsageError("no tests were collected: check the path or the -k/-m expression")


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """Run each CLI invocation from an empty directory (logs land under it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


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
