"""Per-episode returns of each path, newest on the right, on one shared scale (ring buffers: the app
keeps only the last `keep` episodes per path). Invalid episodes are a red ×."""

from __future__ import annotations

import collections

from rich.text import Text
from textual.widget import Widget

from tui_eval.records import EpisodeRecord
from tui_eval.views.format import num

from ..charts import finite_range, sparkline
from .palette import path_style

LABEL = 11
SUFFIX = 9


class Sparklines(Widget):
    DEFAULT_CSS = """
    Sparklines { height: auto; text-wrap: nowrap; text-overflow: clip; }
    """

    def __init__(self, paths: list[str], keep: int = 1024, **kwargs):
        super().__init__(**kwargs)
        self.paths = list(paths)
        self.points: dict[str, collections.deque[tuple[float, bool]]] = {
            name: collections.deque(maxlen=keep) for name in self.paths}

    def add(self, records: list[EpisodeRecord], redraw: bool = True) -> None:
        for rec in records:
            points = self.points.get(rec.path)
            if points is not None:
                points.append((rec.ret, rec.invalid))
        if redraw:
            self.refresh()

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self.paths))

    @property
    def window(self) -> int:
        return max(4, (self.size.width or 80) - LABEL - SUFFIX)

    def caption(self) -> str:
        w = self.window
        lo, hi = finite_range(list(p)[-w:] for p in self.points.values())
        shown = max((min(len(p), w) for p in self.points.values()), default=0)
        if not shown:
            return "returns per episode"
        return f"returns, last {shown} episodes, scale {num(lo)}–{num(hi)}"

    def render(self) -> Text:
        w = self.window
        windows = {name: list(self.points[name])[-w:] for name in self.paths}
        lo, hi = finite_range(windows.values())
        lines = []
        for name in self.paths:
            line = Text(no_wrap=True, overflow="crop")
            line.append(f"{name[:LABEL - 1]:<{LABEL}}", style=path_style(self.paths, name))
            pts = windows[name]
            line.append_text(sparkline(pts, w, lo, hi, path_style(self.paths, name, bar=True)))
            bad = sum(1 for _, invalid in pts if invalid)
            last = next((r for r, invalid in reversed(pts) if not invalid), None)
            suffix = f" {num(last):>{SUFFIX - 1}}" if not bad else f" {bad:>{SUFFIX - 3}} ×"
            line.append(suffix[:SUFFIX], style="bold red" if bad else "dim")
            lines.append(line)
        return Text("\n", no_wrap=True, overflow="crop").join(lines)
