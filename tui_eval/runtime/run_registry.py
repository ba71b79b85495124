"""The per-user list of runs, wherever their logs are: one small file per run under the XDG state
folder (`$XDG_STATE_HOME/tui-eval/runs`, default `~/.local/state/tui-eval/runs`; `TUI_EVAL_STATE`
overrides). `tui-eval ls` reads it; a run's name (its log's stem) finds its log from anywhere."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def registry_dir() -> Path:
    base = os.environ.get("TUI_EVAL_STATE") or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state"), "tui-eval")
    return Path(base) / "runs"


def register(log: str | Path) -> None:
    """Remember the run whose log is `log` (best effort: a read-only home only loses the listing)."""
    log = Path(log).resolve()
    folder = registry_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{log.stem}-{abs(hash(str(log))) % 10**8}.json").write_text(
            json.dumps({"log": str(log), "name": log.stem, "registered_at": time.time()}))
    except OSError:
        pass


def known_logs() -> list[Path]:
    """Every registered log that still exists, oldest registration first."""
    entries = []
    for file in registry_dir().glob("*.json"):
        try:
            entry = json.loads(file.read_text())
        except (OSError, ValueError):
            continue
        if Path(entry["log"]).is_file():
            entries.append((entry.get("registered_at", 0.0), Path(entry["log"])))
    return [log for _, log in sorted(entries)]


def find(name: str) -> Path | None:
    """The newest registered log whose run name (file stem) is `name`."""
    matches = [log for log in known_logs() if log.stem == name or log.name == name]
    return matches[-1] if matches else None
