"""The comparison table: one row per path and a difference row, live anytime-valid intervals.

Columns drop by priority when the terminal is narrow (IQM and mean length first, then ep/s), so the
numbers that decide the verdict stay readable at 80 columns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.widget import Widget

from tui_eval.format import ended_by, interval, num, on_off, percent
from tui_eval.stats import ComparisonSummary

from ..snapshot import RunSnapshot
from .palette import path_style

# (key, header); columns are dropped from the end of DROP_ORDER while the table is wider than the widget
COLUMNS = (
    ("path", "path"),
    ("explore", "explore"),
    ("episodes", "episodes"),
    ("mean", "mean [anytime 95%]"),
    ("iqm", "IQM"),
    ("success", "success [anytime 95%]"),
    ("invalid", "invalid"),
    ("length", "mean len"),
    ("eps", "ep/s"),
    ("ended", "ended by"),
)
DROP_ORDER = ("ended", "length", "iqm", "eps", "explore")


@dataclass
class TableData:
    paths: list[str] = field(default_factory=list)
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    explore: dict[str, bool | None] = field(default_factory=dict)
    throughput: dict[str, tuple[float, float]] = field(default_factory=dict)
    target: int | None = None
    comparison: ComparisonSummary | None = None

    @classmethod
    def of(cls, snapshot: RunSnapshot, target: int | None) -> TableData:
        """The table of a run's snapshot."""
        return cls(paths=list(snapshot.paths), summaries=dict(snapshot.summaries), explore=dict(snapshot.explore),
                   throughput=dict(snapshot.throughput), target=target, comparison=snapshot.comparison)


def path_cells(name: str, s: dict[str, Any], data: TableData, label: str | None = None,
               explore: str | None = None) -> dict[str, Text | str]:
    """One row. The explore cell is the setting the row's episodes ran with (the summary's), and the
    path's current setting only before it has any episode; a pending change shows as "off→on"."""
    invalid = s.get("invalid") or 0
    eps = data.throughput.get(name, (None, None))[0] if label is None else None
    episodes = f"{s.get('episodes', 0):,}" + (f"/{data.target:,}" if data.target and label is None else "")
    return {
        "path": Text(label or name, style=path_style(data.paths, name)),
        "explore": explore if explore is not None else explore_cell(s, data.explore.get(name)),
        "episodes": episodes,
        "mean": f"{num(s.get('mean'), 1)}  {interval(s.get('cs95'), 1)}",
        "iqm": num(s.get("iqm"), 1),
        "success": percent(s.get("success_rate"), s.get("success_cs95")),
        "invalid": Text(f"{invalid} ×", style="bold red") if invalid else Text("0", style="dim"),
        "length": num(s.get("mean_length"), 1),
        "eps": num(eps, 1) if eps is not None else "—",
        "ended": ended_by(s.get("terminations"), shown=1),
    }


def explore_cell(s: dict[str, Any], current: bool | None) -> str:
    ran = s.get("explore") if s.get("episodes") else None
    if ran is None:
        return on_off(current)
    if current is not None and current != ran:
        return f"{on_off(ran)}→{on_off(current)}"
    return on_off(ran)


def path_rows(name: str, s: dict[str, Any], data: TableData) -> list[dict[str, Text | str]]:
    """A path's rows: one, or one per explore setting when the setting changed mid-run (no pooled row)."""
    parts = s.get("by_explore")
    if not parts:
        return [path_cells(name, s, data)]
    return [path_cells(name, part, data, label=f"{name}·{label}", explore=label) for label, part in parts.items()]


def diff_cells(c: ComparisonSummary, label: str | None = None) -> dict[str, Text | str]:
    success = "—"
    if c.success_diff is not None:
        lo_hi = c.success_diff_cs95
        success = f"{100 * c.success_diff:+.0f} pp" + (
            f" [{100 * lo_hi[0]:+.0f}, {100 * lo_hi[1]:+.0f}]" if lo_hi else "")
    return {
        "path": Text(label or f"Δ {c.a}−{c.b}", style="bold"),
        "explore": "",
        "episodes": f"{c.paired:,} pairs",
        "mean": f"{num(c.diff_mean, 1)}  {interval(c.diff_cs95, 1)}",
        "iqm": "",
        "success": success,
        "invalid": "",
        "length": "",
        "eps": "",
        "ended": "",
    }


class ComparisonTable(Widget):
    DEFAULT_CSS = """
    ComparisonTable { height: auto; text-wrap: nowrap; text-overflow: clip; }
    """

    def __init__(self, data: TableData, **kwargs):
        super().__init__(**kwargs)
        self.data = data

    def show(self, data: TableData) -> None:
        self.data = data
        self.refresh()

    def get_content_height(self, container, viewport, width: int) -> int:
        d = self.data
        rows = sum(max(1, len(d.summaries.get(n, {}).get("by_explore") or ())) for n in d.paths)
        return 1 + rows + (1 if len(d.paths) >= 2 else 0)

    def render(self) -> Text:
        """Aligned columns drawn as plain Text lines (a Rich Table costs several times more per frame)."""
        width = self.size.width or 120
        d = self.data
        has_success = any(d.summaries.get(n, {}).get("success_rate") is not None for n in d.paths)
        headers = {k: h for k, h in COLUMNS}
        if not has_success:
            headers["success"] = "success"
        rows: list[tuple[dict[str, Text], str]] = []

        def texts(cells) -> dict[str, Text]:
            return {k: Text(v) if isinstance(v, str) else v for k, v in cells.items()}

        for name in d.paths:
            rows += [(texts(cells), "") for cells in path_rows(name, d.summaries.get(name, {}), d)]
        if d.comparison is not None:
            c = d.comparison
            label = f"Δ {c.a}−{c.b}"
            if len(label) > max(12, max(len(n) for n in d.paths)) and width < 110:
                label = "Δ difference"
            rows.append((texts(diff_cells(c, label)), "on #262626"))
        keys = [k for k, _ in COLUMNS]
        if not any(d.summaries.get(n, {}).get("terminations") for n in d.paths):
            keys.remove("ended")  # the env names no termination terms
        widths = {k: max([len(headers[k])] + [cells[k].cell_len for cells, _ in rows]) for k in keys}
        for drop in DROP_ORDER:  # narrow terminals: the columns that decide the verdict stay
            if sum(widths[k] + 1 for k in keys) <= width:
                break
            if drop in keys:
                keys.remove(drop)
        lines = []
        head = Text(style="bold dim")
        for key in keys:
            left = key in ("path", "explore")
            head.append((headers[key].ljust if left else headers[key].rjust)(widths[key]) + " ")
        lines.append(head)
        for cells, style in rows:
            line = Text(style=style)
            for key in keys:
                cell = cells[key]
                pad = " " * (widths[key] - cell.cell_len)
                if key in ("path", "explore"):
                    line.append_text(cell)
                    line.append(pad + " ")
                else:
                    line.append(pad)
                    line.append_text(cell)
                    line.append(" ")
            lines.append(line)
        return Text("\n").join(lines)
