"""Multi-agent runs: each module's (and the team's) returns per path, a sparkline of its last episodes and its
verdict. Hidden until an episode with per-module returns arrives; the numbers are those of the `--json`
summary's per-module part (tui_eval/views/summary.py), rebuilt from the episodes the app was handed."""

from __future__ import annotations

import collections
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from tui_eval.records import EpisodeRecord
from tui_eval.views.format import interval, num
from tui_eval.views.module_summary import TEAM, team_record
from tui_eval.views.summary import modules_summary

from ..charts import finite_range, sparkline
from .palette import path_style

SPARK = 24  # episodes in each row's sparkline, at most
#: columns the other cells take (module, path, eps, mean, 95% CI, verdict and the gaps), measured at their usual widths
OTHER_COLUMNS = 62


class ModulesPanel(Widget):
    DEFAULT_CSS = """
    ModulesPanel { height: auto; display: none; }
    """

    def __init__(self, paths: list[str], keep: int = 100_000, **kwargs: Any):
        super().__init__(**kwargs)
        self.paths = list(paths)
        self.records: collections.deque[EpisodeRecord] = collections.deque(maxlen=keep)
        self.part: dict[str, Any] = {}

    def add(self, records: list[EpisodeRecord]) -> None:
        multi = [r for r in records if r.modules]
        if multi:
            self.records.extend(multi)
            self.display = True

    def show(self, meta: dict[str, Any], void: str | None) -> None:
        """Recompute the per-module statistics (with the statistics' refresh) and redraw."""
        if not self.records:
            return
        self.part = modules_summary(meta, list(self.records), void)
        self.refresh(layout=True)

    def _points(self, name: str, path: str, spark: int) -> list[tuple[float, bool]]:
        view = team_record if name == TEAM else (lambda r: r.for_module(name))
        return [(view(r).ret, r.invalid) for r in self.records if r.path == path][-spark:]

    def spark_width(self) -> int:
        """The sparkline's episodes: what the width leaves after the numbers (none below 6: 80 columns keep 18)."""
        spark = min(SPARK, self.size.width - OTHER_COLUMNS) if self.size.width else SPARK
        return spark if spark >= 6 else 0

    def render(self) -> Any:
        parts = dict(self.part.get("modules") or {})
        view = self.part.get("module_view", TEAM)
        if view != TEAM:  # the team's part, when the view above is one module
            parts[TEAM] = self.part.get(TEAM)
        table = Table(box=None, padding=(0, 1), show_edge=False, expand=False,
                      title=f"per module (returns above: {'the team' if view == TEAM else 'module ' + view})",
                      title_justify="left", title_style="bold")
        spark = self.spark_width()
        for column in ("module", "path", "eps", "mean", "95% CI", *([f"last {spark}"] if spark else []), "verdict"):
            table.add_column(column, no_wrap=True)
        spark_points = {(n, p): self._points(n, p, spark) for n, part in parts.items() if part for p in part["paths"]}
        lo, hi = finite_range(spark_points.values())
        for name, part in parts.items():
            if not part:
                continue
            verdict = (part.get("comparison") or {}).get("verdict") or "—"
            for index, (path, p) in enumerate(part["paths"].items()):
                style = path_style(self.paths, path) if path in self.paths else ""
                bar_style = path_style(self.paths, path, bar=True) if path in self.paths else ""
                bars = [sparkline(spark_points[(name, path)], spark, lo, hi, bar_style)] if spark else []
                table.add_row(Text(name if index == 0 else "", style="bold"), Text(path, style=style),
                              num(p["episodes"]), num(p["mean"], 1), interval(p["ci95"], 1), *bars,
                              Text(verdict.upper() if index == 0 else "", style="bold"))
        return table
