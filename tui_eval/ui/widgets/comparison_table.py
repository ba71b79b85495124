"""The comparison table: one row per path and a difference row, live anytime-valid intervals.

Columns drop by priority when the terminal is narrow (IQM and mean length first, then ep/s), so the
numbers that decide the verdict stay readable at 80 columns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from tui_eval.format import interval, num, on_off, percent

from .palette import path_style

# (key, header, minimum terminal width to show it)
COLUMNS = (
    ("path", "path", 0),
    ("explore", "explore", 0),
    ("episodes", "episodes", 0),
    ("mean", "mean  [anytime 95%]", 0),
    ("iqm", "IQM", 100),
    ("success", "success  [anytime 95%]", 0),
    ("invalid", "invalid", 0),
    ("length", "mean len", 100),
    ("eps", "ep/s", 72),
)


@dataclass
class TableData:
    paths: list[str] = field(default_factory=list)
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    explore: dict[str, bool | None] = field(default_factory=dict)
    throughput: dict[str, tuple[float, float]] = field(default_factory=dict)
    target: int | None = None
    comparison: dict[str, Any] | None = None


def path_cells(name: str, s: dict[str, Any], data: TableData) -> dict[str, Text | str]:
    invalid = s.get("invalid") or 0
    eps = data.throughput.get(name, (None, None))[0]
    episodes = f"{s.get('episodes', 0):,}" + (f"/{data.target:,}" if data.target else "")
    return {
        "path": Text(name, style=path_style(data.paths, name)),
        "explore": on_off(data.explore.get(name)),
        "episodes": episodes,
        "mean": f"{num(s.get('mean'), 1)}  {interval(s.get('cs95'), 1)}",
        "iqm": num(s.get("iqm"), 1),
        "success": percent(s.get("success_rate"), s.get("success_cs95")),
        "invalid": Text(f"{invalid} ×", style="bold red") if invalid else Text("0", style="dim"),
        "length": num(s.get("mean_length"), 1),
        "eps": num(eps, 1) if eps is not None else "—",
    }


def diff_cells(c: dict[str, Any]) -> dict[str, Text | str]:
    success = "—"
    if c.get("success_diff") is not None:
        lo_hi = c.get("success_diff_cs95")
        success = f"{100 * c['success_diff']:+.0f} pp" + (
            f" [{100 * lo_hi[0]:+.0f}, {100 * lo_hi[1]:+.0f}]" if lo_hi else "")
    paired = c.get("paired", 0)
    return {
        "path": Text(f"Δ {c['a']}−{c['b']}", style="bold"),
        "explore": "",
        "episodes": f"{paired:,} pairs",
        "mean": f"{num(c.get('diff_mean'), 1)}  {interval(c.get('diff_cs95'), 1)}",
        "iqm": "",
        "success": success,
        "invalid": "",
        "length": "",
        "eps": "",
    }


class ComparisonTable(Widget):
    DEFAULT_CSS = """
    ComparisonTable { height: auto; }
    """

    def __init__(self, data: TableData, **kwargs):
        super().__init__(**kwargs)
        self.data = data

    def show(self, data: TableData) -> None:
        self.data = data
        self.refresh()

    def get_content_height(self, container, viewport, width: int) -> int:
        return 1 + len(self.data.paths) + (1 if len(self.data.paths) >= 2 else 0)

    def render(self) -> Table:
        width = self.size.width or 120
        columns = [c for c in COLUMNS if width >= c[2]]
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), expand=False,
                      header_style="bold dim", show_header=True)
        # SIMPLE_HEAD draws a rule under the header; we have no room for it at 24 rows
        table.box = None
        for key, header, _ in columns:
            table.add_column(header, justify="left" if key in ("path", "explore") else "right", no_wrap=True)
        d = self.data
        for name in d.paths:
            cells = path_cells(name, d.summaries.get(name, {}), d)
            table.add_row(*(cells[key] for key, _, _ in columns))
        if d.comparison is not None:
            cells = diff_cells(d.comparison)
            table.add_row(*(cells[key] for key, _, _ in columns), style="on grey15")
        return table
