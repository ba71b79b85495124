"""The terminal tools the real-terminal tests drive (tmux, Xvfb, xterm, kitty, xdotool, xwd, ImageMagick, Chromium;
.ci/run installs them). On a developer's machine a test whose tool is missing is skipped; where the suite must run
them all (CI: `CI` set, or REQUIRE_TERMINALS=1) it fails instead, so that no real-terminal check is lost quietly."""

from __future__ import annotations

import os
import shutil

import pytest

#: the environment variables that make a missing terminal tool a failure
REQUIRED = bool(os.environ.get("CI")) or os.environ.get("REQUIRE_TERMINALS") == "1"


def needs(*tools: str) -> pytest.MarkDecorator:
    """Mark a test (or a module, as `pytestmark`) as driving these tools: commands, or absolute paths."""
    return pytest.mark.terminal_tools(*tools)


def missing(tools) -> list[str]:
    return [t for t in tools if not (os.path.exists(t) if os.path.isabs(t) else shutil.which(t))]


def unavailable(why: str) -> None:
    """A terminal the test needs cannot be had: a failure where terminals are required, else a skip."""
    if REQUIRED:
        pytest.fail(f"{why} (terminal tests are required here: CI or REQUIRE_TERMINALS=1)", pytrace=False)
    pytest.skip(f"{why} (.ci/run installs the terminal tools)")


def check_marked(item) -> None:
    """Run by tests/conftest.py before each test: its marked tools must be there."""
    for mark in item.iter_markers("terminal_tools"):
        gone = missing(mark.args)
        if gone:
            unavailable(f"not installed: {', '.join(gone)}")
