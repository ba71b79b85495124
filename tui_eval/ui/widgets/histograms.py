"""Return distributions, one histogram per path side by side, on shared bins and one density scale, so
their shapes compare at a glance. Counts are updated incrementally (see charts.Histogram)."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widget import Widget

from tui_eval.stats import ReturnsSnapshot

from ..charts import Histogram, axis_line, bin_count, histogram_lines
from .palette import path_style


class Histograms(Widget):
    DEFAULT_CSS = """
    Histograms { height: 6; text-wrap: nowrap; text-overflow: clip; }
    """

    def __init__(self, paths: list[str], **kwargs):
        super().__init__(**kwargs)
        self.paths = list(paths)
        self.hists = {name: Histogram() for name in self.paths}
        self.stats: dict[str, ReturnsSnapshot] = {}
        self._key: tuple = ()

    def show(self, stats: dict[str, ReturnsSnapshot]) -> None:
        """`stats`: each path's returns and counts, frozen when taken (never live statistics)."""
        key = tuple((n, s.series, s.n, s.invalid) for n, s in stats.items())
        if key != self._key:
            self._key = key
            self.stats = stats
            self.refresh()

    def render(self) -> Text:
        present = [n for n in self.paths if n in self.stats and self.stats[n].n > 0]
        if not present:
            return Text("distribution appears after the first episodes", style="dim")
        width = self.size.width or 80
        height = max(1, (self.size.height or 6) - 2)
        gap = 3
        col = max(8, (width - gap * (len(self.paths) - 1)) // max(1, len(self.paths)))
        extents = [self.hists[n].extent(self.stats[n]) for n in present]
        lo = min(e[0] for e in extents)
        hi = max(e[1] for e in extents)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return Text("no finite returns yet", style="dim")
        bins = bin_count(max(self.stats[n].n for n in present), col)
        counts = {n: self.hists[n].update(self.stats[n], float(lo), float(hi), bins) for n in present}
        peak = max((c.max() / c.sum()) for c in counts.values() if c.sum())
        columns: list[list[Text]] = []
        for name in self.paths:
            s = self.stats.get(name)
            title = Text(no_wrap=True, overflow="ellipsis")
            title.append(name, style=path_style(self.paths, name))
            if s is None or s.n == 0:
                title.append("  no valid episodes yet", style="dim")
                columns.append([title] + [Text("")] * (height + 1))
                continue
            title.append(f"  n={s.n:,}", style="dim")
            if s.invalid:
                title.append(f"  {s.invalid:,} invalid ×", style="bold red")
            rows = histogram_lines(counts[name], height, peak, path_style(self.paths, name, bar=True), col)
            columns.append([title, *rows, axis_line(float(lo), float(hi), col)])
        lines = []
        for parts in zip(*columns):
            line = Text(no_wrap=True, overflow="crop")
            for i, part in enumerate(parts):
                part = part.copy()
                part.truncate(col, pad=True)
                line.append_text(part)
                if i < len(parts) - 1:
                    line.append(" " * gap)
            lines.append(line)
        return Text("\n", no_wrap=True, overflow="crop").join(lines)
