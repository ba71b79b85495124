"""`tui-eval attach [RUN]`: open a run from its log, live (its controls work) or finished; `--headless`:
the summary table; `--serve`: the app in a browser."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tui_eval.errors import BadInput
from tui_eval.runs import open_log, resolve_run, true_status
from tui_eval.sweep.sweep_log import is_sweep

from .parsers import CommandParser


def main(argv: list[str]) -> int:
    parser = CommandParser(prog="tui-eval attach", description="Open a run from its log (live or finished).")
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
    if is_sweep(log.meta()):
        return attach_sweep(path, log.meta(), args)
    if args.serve:
        from tui_eval.ui.serve import serve_viewer

        return serve_viewer(path, args.host, args.port)
    if not args.headless:
        from tui_eval.runtime.app_process import run_viewer
        from tui_eval.ui.frame_renderers import choose

        return run_viewer(path, frames=choose(args.frames_renderer, args.frames, args.frames_fps))
    from tui_eval.views.format import summary_table  # the statistics' libraries: only for the table
    from tui_eval.views.summary import build_summary, replay

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


def attach_sweep(path: Path, meta: dict, args) -> int:
    """A sweep's leaderboard: live in the app (its keys steer the sweep), or the table as it stands."""
    if args.serve or args.frames:
        raise BadInput("a sweep's leaderboard opens in the terminal; drop --serve / --frames")
    if not args.headless:
        from tui_eval.runtime.sweep_live import run_sweep_viewer

        return run_sweep_viewer(path)
    from tui_eval.runtime.sweep_control import poll_log
    from tui_eval.views.sweep import leaderboard

    result, status = poll_log(path)
    if args.json:  # the sweep's summary as it stands (null before its first round ends), its status now
        Path(args.json).write_text(json.dumps({**(result or {"checkpoints": []}), "status": status, "log": str(path)},
                                              indent=1))
    board = leaderboard(result) if result else "no round has ended yet"
    sys.stdout.write(f"{path} (sweep, {status})\n{board}\n")
    return 0
