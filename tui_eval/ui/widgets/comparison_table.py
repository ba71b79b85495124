"""The comparison table: one row per path and a difference row, live anytime-valid intervals.

Columns drop by priority when the terminal is narrow (IQM and mean length first, then ep/s), so the
numbers that decide the verdict stay readable at 80 columns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.widget import Widget

from tui_eval.stats import ComparisonSummary
from tui_eval.stats.declared import Cell, declared
from tui_eval.views.format import cell_text, ended_by, interval, num, on_off
from tui_eval.views.snapshot import RunSnapshot

from .palette import path_style

# (key, header) around the declared statistics' columns (tui_eval/stats/declared.py); while the table is wider
# than the widget, columns drop in DROP_ORDER, and declared ones by their `drop` (lower first)
LEADING = (("path", "path"), ("explore", "explore"), ("episodes", "episodes"))
TRAILING = (("eps", "ep/s"), ("ended", "ended by"))
_DROP_RANK = {"ended": 0.0, "eps": 3.0, "explore": 4.0}


def columns() -> tuple[tuple[str, str], ...]:
    """(key, header) of every column, left to right."""
    stats = tuple((stat.key, stat.app.header) for stat in declared() if stat.app is not None)
    return LEADING + stats + TRAILING


def drop_order() -> tuple[str, ...]:
    """The columns that may drop, first to go first."""
    ranks = dict(_DROP_RANK)
    ranks.update({stat.key: stat.app.drop for stat in declared() if stat.app is not None and stat.app.drop is not None})
    return tuple(sorted(ranks, key=lambda k: ranks[k]))


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
    eps = data.throughput.get(name, (None, None))[0] if label is None else None
    episodes = f"{s.get('episodes', 0):,}" + (f"/{data.target:,}" if data.target and label is None else "")
    cells: dict[str, Text | str] = {
        "path": Text(label or name, style=path_style(data.paths, name)),
        "explore": explore if explore is not None else explore_cell(s, data.explore.get(name)),
        "episodes": episodes,
    }
    for stat in declared():
        if stat.app is not None:
            cells[stat.key] = _cell(stat.app, s.get(stat.key), s)
    cells["eps"] = num(eps, 1) if eps is not None else "—"
    cells["ended"] = ended_by(s.get("terminations"), shown=1)
    return cells


def _cell(cell: Cell, value: Any, s: dict[str, Any]) -> Text | str:
    if cell.show == "alarm":
        return Text(f"{value} ×", style="bold red") if value else Text("0", style="dim")
    return cell_text(cell, value, s)


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
    cells: dict[str, Text | str] = {key: "" for key, _ in columns()}
    cells.update({"path": Text(label or f"Δ {c.a}−{c.b}", style="bold"), "episodes": f"{c.paired:,} pairs",
                  "mean": f"{num(c.diff_mean, 1)}  {interval(c.diff_cs95, 1)}", "success_rate": success})
    return cells


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
        headers = {k: h for k, h in columns()}
        if not has_success:
            headers["success_rate"] = "success"
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
        keys = [k for k, _ in columns()]
        if not any(d.summaries.get(n, {}).get("terminations") for n in d.paths):
            keys.remove("ended")  # the env names no termination terms
        widths = {k: max([len(headers[k])] + [cells[k].cell_len for cells, _ in rows]) for k in keys}
        for drop in drop_order():  # narrow terminals: the columns that decide the verdict stay
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
