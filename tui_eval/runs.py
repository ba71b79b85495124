"""Runs found wherever their logs are (`tui-eval ls | attach | stop | resume`, in tui_eval.commands).

RUN is a run's name (its log's file name without `.sqlite`), a log path, or nothing (the newest run).
"""

from __future__ import annotations

from pathlib import Path

from tui_eval.errors import BadInput
from tui_eval.log.lifecycle import EngineState, RunMeta, RunStatus
from tui_eval.log.store import RunLog
from tui_eval.outputs import RUNS_DIR
from tui_eval.runtime import log_lock, run_registry


def all_logs() -> list[Path]:
    """Registered runs and the logs under ./tui-eval-runs/, oldest first, each once."""
    found = {p.resolve(): p for p in run_registry.known_logs()}
    if RUNS_DIR.is_dir():
        for path in RUNS_DIR.glob("*.sqlite"):
            found.setdefault(path.resolve(), path)
    return sorted(found, key=lambda p: p.stat().st_mtime)


def resolve_run(name: str | None) -> Path:
    """A run by log path or name, or the newest one when None."""
    if name is None:
        logs = all_logs()
        if not logs:
            raise BadInput("no runs yet; start one with tui-eval CHECKPOINT, or name a log file")
        return logs[-1]
    for candidate in (Path(name), RUNS_DIR / name, RUNS_DIR / f"{name}.sqlite"):
        try:
            if candidate.is_file():
                return candidate.resolve()
        except OSError:  # a name too long to be a file: perhaps a run's name
            continue
    found = run_registry.find(name)
    if found is None:
        raise BadInput(f"no run {name!r} (neither a log file nor a run name); list runs with tui-eval ls")
    return found


def open_log(path: Path) -> RunLog:
    try:
        log = RunLog(path, readonly=True)
        log.meta()
        return log
    except Exception as exc:
        raise BadInput(f"{path} is not a tui-eval run log ({type(exc).__name__}); list runs with tui-eval ls") from None


def true_status(path: Path, meta: dict) -> str:
    """The log's status, corrected for a run whose process is gone (it cannot say so itself)."""
    record = RunMeta.from_json(meta)
    if record.status is not None and record.status.live and log_lock.holder(path) is None:
        return "interrupted (process gone)"
    if record.status == RunStatus.RUNNING and record.state == EngineState.PAUSED:
        return "paused"
    return record.shown_status()
