"""`tui-eval ls` and `tui-eval attach`: runs read back from their logs, live or finished."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tui_eval.format import summary_table, table
from tui_eval.spec import BadInput
from tui_eval.store import RunLog
from tui_eval.summary import build_summary, replay

RUNS_DIR = Path("tui-eval-runs")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise BadInput(f"{message}; see tui-eval {self.prog.split()[-1]} --help")


def _logs(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.sqlite"), key=lambda p: p.stat().st_mtime)


def resolve_run(name: str | None, directory: Path = RUNS_DIR) -> Path:
    """A run by file path, by name under the runs directory, or the newest when None."""
    if name is None:
        logs = _logs(directory)
        if not logs:
            raise BadInput(f"no runs under {directory}/; start one with tui-eval CHECKPOINT, or name a log file")
        return logs[-1]
    for candidate in (Path(name), directory / name, directory / f"{name}.sqlite"):
        if candidate.is_file():
            return candidate
    raise BadInput(f"no run log {name!r} (looked in . and {directory}/); list runs with tui-eval ls")


def open_log(path: Path) -> RunLog:
    try:
        log = RunLog(path, readonly=True)
        log.meta()
        return log
    except Exception as exc:
        raise BadInput(f"{path} is not a tui-eval run log ({type(exc).__name__}); list runs with tui-eval ls") from None


def list_runs(argv: list[str]) -> int:
    parser = _Parser(prog="tui-eval ls", description="List runs and their state.")
    parser.add_argument("--dir", default=str(RUNS_DIR), help="where the run logs are (default ./tui-eval-runs)")
    args = parser.parse_args(argv)
    rows = []
    for path in _logs(Path(args.dir)):
        try:
            log = RunLog(path, readonly=True)
            meta = log.meta()
            counts: dict[str, int] = {}
            for rec in log.records():
                counts[rec.path] = counts.get(rec.path, 0) + 1
            log.close()
        except Exception:
            rows.append([path.name, "?", "?", "?", "unreadable", ""])
            continue
        started = meta.get("started_at")
        rows.append([path.name, meta.get("kind", "?"), meta.get("env", "?"),
                     " ".join(f"{p}:{counts.get(p, 0)}" for p in meta.get("paths", [])),
                     meta.get("status", "?"),
                     time.strftime("%Y-%m-%d %H:%M", time.localtime(started)) if started else ""])
    if not rows:
        print(f"no runs under {args.dir}/")
        return 0
    print(table(rows, ["run", "kind", "env", "episodes", "status", "started"]))
    return 0


def attach(argv: list[str]) -> int:
    parser = _Parser(prog="tui-eval attach", description="Open a run from its log (live or finished).")
    parser.add_argument("run", nargs="?", help="log file or run name (default: the newest run)")
    parser.add_argument("--dir", default=str(RUNS_DIR), help="where the run logs are (default ./tui-eval-runs)")
    parser.add_argument("--headless", action="store_true", help="print the summary table and exit")
    parser.add_argument("--json", help="write the summary here")
    args = parser.parse_args(argv)
    path = resolve_run(args.run, Path(args.dir))
    log = open_log(path)
    if not args.headless:
        from tui_eval.ui.app import run_viewer

        return run_viewer(path)
    meta, records = log.meta(), log.records()
    summary = build_summary(meta, replay(meta, records), records)
    summary["log"] = str(path)
    if args.json:
        import json

        Path(args.json).write_text(json.dumps(summary, indent=1))
    sys.stdout.write(f"{path} ({meta.get('status', '?')})\n{summary_table(summary)}\n")
    for failure in meta.get("path_errors") or []:
        state = "given up" if failure.get("gave_up") else "loaded afresh"
        sys.stdout.write(f"\npath {failure['path']} failed ({state}): {failure['message']}\n"
                         f"{failure.get('details', '')}")
    return 0
