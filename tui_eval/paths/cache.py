"""Where a kind keeps what it derives from a checkpoint (exports, converted weights), for any kind to use."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """`$TUI_EVAL_CACHE`, else `$XDG_CACHE_HOME/tui-eval`, else `~/.cache/tui-eval`."""
    if os.environ.get("TUI_EVAL_CACHE"):
        return Path(os.environ["TUI_EVAL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tui-eval"
