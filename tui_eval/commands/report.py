"""`tui-eval report [RUN] [--out FILE]`: a run (or a sweep), live or finished, as one picture to share: PNG, SVG
or a self-contained HTML page (tui_eval/report/; matplotlib, the `report` extra)."""

from __future__ import annotations

import sys
from pathlib import Path

from tui_eval.outputs import check_report_target, report_path
from tui_eval.runs import open_log, resolve_run, true_status

from .parsers import CommandParser


def main(argv: list[str]) -> int:
    parser = CommandParser(prog="tui-eval report", description="Draw a run (or a sweep), live or finished, as one "
                           "picture to share: returns per path, the paired seeds, how the verdict narrowed, success "
                           "and invalid rates, and the verdict in words.")
    parser.add_argument("run", nargs="?", help="run name or log file (default: the newest run)")
    parser.add_argument("--out", metavar="FILE.png|.svg|.html",
                        help="where to draw it (default: next to the log, <log>.report.png)")
    args = parser.parse_args(argv)
    path = resolve_run(args.run)
    log = open_log(path)
    status = true_status(path, log.meta())  # a live run's, or a dead one's that its log cannot tell
    log.close()
    out = check_report_target(Path(args.out) if args.out else report_path(path), "--out")
    from tui_eval.report import write_report  # numpy and matplotlib: only once the arguments are good

    sys.stdout.write(f"{write_report(path, out, status=status)}\n")
    return 0
