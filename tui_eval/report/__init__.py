"""`tui-eval report` and `--report FILE`: a run (or a sweep) as one picture to share, drawn from its log, live or
finished, read-only.

A run's figure: each path's returns on shared bins, the paired seeds of the first two paths against each other,
how the anytime interval of their difference narrowed to the verdict, the success and invalid rates, a multi-agent
run's returns per module, and a caption with the verdict in words. A sweep's: each checkpoint's held-out mean by
training iteration, the eliminated, the best and training's pick. PNG, SVG, or an HTML page (the SVG inline, the
summary table, the caption; self-contained).

`data.py` / `sweep_data.py` gather what is shown (numpy, no matplotlib: tested as data); `figure.py` /
`sweep_figure.py` draw it; `html.py` makes the page. matplotlib is the `report` extra: imported only here, when a
report is drawn, never by the command line itself.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tui_eval.errors import BadInput
from tui_eval.log.store import RunLog
from tui_eval.outputs import REPORT_SUFFIXES

NEEDS_MATPLOTLIB = "tui-eval report needs matplotlib: pip install 'tui-eval[report]'"


def write_report(log_path: str | Path, out: str | Path, *, status: str | None = None) -> Path:
    """Draw the run (or sweep) whose log is `log_path` into `out` (.png, .svg or .html, replaced whole: a reader
    never sees half a file); `status`: the run's status as it stands, where the caller knows better than its log
    (a process gone). Returns `out`. BadInput: an unknown suffix, no matplotlib, a sweep before its first round."""
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in REPORT_SUFFIXES:
        raise BadInput(f"a report is {', '.join(REPORT_SUFFIXES)}, not {out.name}; e.g. {out.with_suffix('.png')}")
    drawing = _drawing()
    report, draw, make_page = gather(Path(log_path), status, drawing)
    figure = draw(report)
    partial = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        if suffix == ".html":
            partial.write_text(make_page(report, drawing.svg_text(figure)), encoding="utf-8")
        else:
            drawing.save(figure, partial, suffix)
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    return out


def gather(log_path: Path, status: str | None, drawing: Any) -> tuple[Any, Any, Any]:
    """What the log's report shows, and the functions that draw it and put it on a page."""
    from tui_eval.sweep.sweep_log import is_sweep

    from . import html

    name = log_path.name.removesuffix(".sqlite")
    log = RunLog(log_path, readonly=True)
    try:
        meta = log.meta()
        if is_sweep(meta):
            from .sweep_data import sweep_report
            from .sweep_figure import sweep_figure

            return sweep_report(meta, name=name, status=status), sweep_figure, html.sweep_page
        from .data import run_report

        return run_report(meta, log.records(), name=name, status=status), drawing.run_figure, html.run_page
    finally:
        log.close()


def _drawing() -> Any:
    """The drawing module (figure.py), or BadInput when matplotlib is not installed."""
    try:
        from . import figure
    except ImportError as exc:
        if (exc.name or "").split(".")[0] == "matplotlib":
            raise BadInput(NEEDS_MATPLOTLIB) from None
        raise
    return figure
