"""`tui-eval ls | attach | stop | resume`: runs found wherever their logs are, read back or acted on.

RUN is a run's name (its log's file name without `.sqlite`), a log path, or nothing (the newest run).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tui_eval.format import summary_table, table
from tui_eval.lifecycle import EngineState, RunMeta, RunStatus
from tui_eval.outputs import RUNS_DIR
from tui_eval.runtime import ownership, registry
from tui_eval.spec import BadInput
from tui_eval.store import RunLog
from tui_eval.summary import build_summary, replay

STOP_WAIT_S = 60.0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise BadInput(f"{message}; see tui-eval {self.prog.split()[-1]} --help")


def all_logs() -> list[Path]:
    """Registered runs and the logs under ./tui-eval-runs/, oldest first, each once."""
    found = {p.resolve(): p for p in registry.known_logs()}
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
        if candidate.is_file():
            return candidate.resolve()
    found = registry.find(name)
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
    if record.status is not None and record.status.live and ownership.holder(path) is None:
        return "interrupted (process gone)"
    if record.status == RunStatus.RUNNING and record.state == EngineState.PAUSED:
        return "paused"
    return record.shown_status()


def list_runs(argv: list[str]) -> int:
    parser = _Parser(prog="tui-eval ls", description="List your runs, wherever their logs are.")
    parser.parse_args(argv)
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
                     " ".join(f"{p}:{counts.get(p, 0)}" for p in meta.get("paths", [])),
                     str(meta.get("verdict") or "—"),
                     time.strftime("%Y-%m-%d %H:%M", time.localtime(started)) if started else "", str(path)])
    if not rows:
        print("no runs yet; start one with tui-eval CHECKPOINT")
        return 0
    print(table(rows, ["run", "status", "checkpoint", "episodes", "verdict", "started", "log"]))
    return 0


def attach(argv: list[str]) -> int:
    parser = _Parser(prog="tui-eval attach", description="Open a run from its log (live or finished).")
    parser.add_argument("run", nargs="?", help="run name or log file (default: the newest run)")
    parser.add_argument("--headless", action="store_true", help="print the summary table and exit")
    parser.add_argument("--json", help="write the summary here")
    parser.add_argument("--serve", action="store_true", help="serve the app to a browser (textual-serve)")
    parser.add_argument("--host", default="127.0.0.1", help="--serve: the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="--serve: the port (default 8000)")
    parser.add_argument("--frames", action="store_true", help="open the frame panel (a live run's frames)")
    parser.add_argument("--frames-renderer", metavar="halfblock|kitty|sixel|off", help="how frames are drawn")
    parser.add_argument("--frames-fps", type=float, help="frames shown per second at most (default 10)")
    args = parser.parse_args(argv)
    path = resolve_run(args.run)
    log = open_log(path)
    if args.serve:
        from tui_eval.ui.serve import serve_viewer

        return serve_viewer(path, args.host, args.port)
    if not args.headless:
        from tui_eval.runtime.app_process import run_viewer
        from tui_eval.ui.frame_renderers import choose

        return run_viewer(path, frames=choose(args.frames_renderer, args.frames, args.frames_fps))
    meta, records = log.meta(), log.records()
    summary = build_summary(meta, replay(meta, records), records)
    summary["status"] = true_status(path, meta)
    summary["log"] = str(path)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))
    sys.stdout.write(f"{path} ({summary['status']})\n{summary_table(summary)}\n")
    write_incidents(meta.get("incidents") or [])
    for failure in meta.get("path_errors") or []:
        state = "given up" if failure.get("gave_up") else "loaded afresh"
        sys.stdout.write(f"\npath {failure['path']} failed ({state}): {failure['message']}\n"
                         f"{failure.get('details', '')}")
    return 0


def write_incidents(incidents: list[dict]) -> None:
    """Every restart, loss and wait of the run's workers, when it happened and why (resumes included)."""
    if incidents:
        sys.stdout.write("\nworker incidents:\n")
    for item in incidents:
        at = time.strftime("%H:%M:%S", time.localtime(item.get("at", 0)))
        sys.stdout.write(f"  {at} path {item.get('path')} ({item.get('kind')}): {item.get('message')}\n")


def stop(argv: list[str]) -> int:
    parser = _Parser(prog="tui-eval stop", description="End a live run cleanly.")
    parser.add_argument("run", help="run name or log file")
    args = parser.parse_args(argv)
    path = resolve_run(args.run)
    if ownership.holder(path) is None:
        status = true_status(path, open_log(path).meta())
        raise BadInput(f"run {path.stem} is not live ({status}); nothing to stop")
    from tui_eval.runtime.control import ControlClient

    reply = ControlClient(path).send("stop")
    if not reply.get("ok"):
        raise BadInput(f"run {path.stem} refused to stop: {reply.get('error')}")
    deadline = time.monotonic() + STOP_WAIT_S
    while ownership.holder(path) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    print(f"run {path.stem}: {true_status(path, open_log(path).meta())}")
    return 0


def resume(argv: list[str]) -> int:
    parser = _Parser(prog="tui-eval resume", description="Continue a run whose process died, from its log.")
    parser.add_argument("run", help="run name or log file")
    parser.add_argument("--headless", action="store_true", help="no UI (as the run itself may have had)")
    args = parser.parse_args(argv)
    from tui_eval.runtime.resume import resume_run

    return resume_run(resolve_run(args.run), headless=args.headless)


def saved_ray_address(argv: list[str]) -> str | None:
    """The `--ray-address` a run to resume was started with (read before Ray is set up), if any."""
    name = next((a for a in argv if not a.startswith("-")), None)
    try:
        reader = RunLog(resolve_run(name), readonly=True)
        spec = reader.meta().get("spec") or {}
        reader.close()
    except Exception:  # an unknown or unreadable run: resume itself says what is wrong
        return None
    return spec.get("ray_address")
