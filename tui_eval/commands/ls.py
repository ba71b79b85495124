"""`tui-eval ls`: every run, wherever its log is: status, checkpoint, episodes, verdict."""

from __future__ import annotations

import time
from pathlib import Path

from tui_eval.log.store import RunLog
from tui_eval.runs import all_logs, true_status
from tui_eval.sweep.sweep_log import is_sweep

from .parsers import CommandParser


def main(argv: list[str]) -> int:
    parser = CommandParser(prog="tui-eval ls", description="List your runs, wherever their logs are.")
    parser.parse_args(argv)
    from tui_eval.views.format import table  # the statistics' libraries: only once the arguments are good
    rows = []
    for path in all_logs():
        try:
            log = RunLog(path, readonly=True)
            meta = log.meta()
            counts = log.counts_by_path()
            log.close()
        except Exception:
            rows.append([path.stem, "?", "?", "?", "unreadable", "", str(path)])
            continue
        started = meta.get("started_at")
        rows.append([path.stem, true_status(path, meta), Path(str(meta.get("checkpoint", "?"))).name,
                     episodes_cell(meta, counts),
                     verdict_cell(meta),
                     time.strftime("%Y-%m-%d %H:%M", time.localtime(started)) if started else "", str(path)])
    if not rows:
        print("no runs yet; start one with tui-eval CHECKPOINT")
        return 0
    print(table(rows, ["run", "status", "checkpoint", "episodes", "verdict", "started", "log"]))
    return 0


def episodes_cell(meta: dict, counts: dict[str, int]) -> str:
    """Each path's episodes; a sweep's in all, over its checkpoints."""
    if is_sweep(meta):
        return f"sweep of {len(meta.get('paths', []))}: {sum(counts.values())}"
    return " ".join(f"{p}:{counts.get(p, 0)}" for p in meta.get("paths", []))


def verdict_cell(meta: dict) -> str:
    """The verdict as the app says it: IDENTICAL first where every paired seed was the same episode."""
    comparison = (meta.get("snapshot") or {}).get("comparison") or {}
    verdict = str(meta.get("verdict") or "—")
    if comparison.get("per_seed") == "identical":
        return f"IDENTICAL {comparison.get('identical_pairs')}/{comparison.get('identical_pairs')} ({verdict})"
    if comparison.get("same_policy"):
        return f"SAME POLICY (returns {verdict})"
    if comparison.get("exact") and comparison.get("verdict") == "differ":
        return "DIFFER (exact)"
    return verdict
