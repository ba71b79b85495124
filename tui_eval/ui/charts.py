"""Text charts drawn with Unicode block characters and Rich styles: no plotting dependency, readable
over plain SSH in any xterm-256color terminal.

- `sparkline`: one cell per episode (the last `width` episodes), eighth-block heights on a shared
  scale; an invalid episode is a red `×`, never dropped.
- `Histogram`: an incrementally updated histogram of a path's valid returns (PathStats keeps them in
  an append-only array: only the returns added since the last draw are binned, so a refresh costs
  O(new episodes), not O(all)); `histogram_lines` draws several on the same bins and scale.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from rich.text import Text

from tui_eval.stats import ReturnsSnapshot
from tui_eval.views.format import num

BARS = " ▁▂▃▄▅▆▇█"
INVALID_MARK = "×"


def spark_char(value: float, lo: float, hi: float) -> str:
    if not math.isfinite(value):
        return INVALID_MARK
    if hi <= lo:
        return BARS[4]
    level = 1 + int((value - lo) / (hi - lo) * 7.999)
    return BARS[min(8, max(1, level))]


def sparkline(points: Sequence[tuple[float, bool]], width: int, lo: float, hi: float, style: str,
              invalid_style: str = "bold red") -> Text:
    """The last `width` points (return, invalid) as one line; right-aligned so the newest is at the end."""
    text = Text(no_wrap=True, overflow="crop")
    shown = list(points)[-width:] if width > 0 else []
    if len(shown) < width:
        text.append("·" * (width - len(shown)), style="dim")
    run: list[str] = []
    run_style = style
    for ret, invalid in shown:
        char, char_style = (INVALID_MARK, invalid_style) if invalid or not math.isfinite(ret) else (
            spark_char(ret, lo, hi), style)
        if char_style != run_style and run:
            text.append("".join(run), style=run_style)
            run = []
        run_style = char_style
        run.append(char)
    if run:
        text.append("".join(run), style=run_style)
    return text


def finite_range(series: Iterable[Sequence[tuple[float, bool]]]) -> tuple[float, float]:
    lo, hi = math.inf, -math.inf
    for points in series:
        for ret, invalid in points:
            if not invalid and math.isfinite(ret):
                lo = min(lo, ret)
                hi = max(hi, ret)
    if lo > hi:
        return 0.0, 1.0
    return lo, hi


class Histogram:
    """Counts of one path's valid returns over shared bin edges, kept up to date incrementally from the
    path's successive `ReturnsSnapshot`s (a snapshot of the same series only adds returns)."""

    def __init__(self) -> None:
        self.source: object | None = None  # the series these counts are of
        self.edges: np.ndarray | None = None
        self.counts: np.ndarray | None = None
        self.upto = 0
        self._seen: object | None = None
        self._seen_upto = 0
        self._lo, self._hi = math.inf, -math.inf

    def extent(self, snap: ReturnsSnapshot) -> tuple[float, float]:
        """(min, max) of the returns so far, scanning only those added since the last call."""
        returns = snap.returns
        n = returns.shape[0]
        if self._seen is not snap.series or n < self._seen_upto:
            self._seen, self._seen_upto, self._lo, self._hi = snap.series, 0, math.inf, -math.inf
        if n > self._seen_upto:
            new = returns[self._seen_upto:n]
            self._lo, self._hi = min(self._lo, float(new.min())), max(self._hi, float(new.max()))
            self._seen_upto = n
        return self._lo, self._hi

    def update(self, snap: ReturnsSnapshot, lo: float, hi: float, bins: int) -> np.ndarray:
        """Counts of `snap.returns` in `bins` equal bins over [lo, hi] (which must hold them all: see
        `extent`); returns added after `extent` was asked wait for the next update."""
        returns = snap.returns
        n = min(returns.shape[0], self._seen_upto if self._seen is snap.series else 0)
        edges, counts = self.edges, self.counts
        if (self.source is not snap.series or edges is None or counts is None or counts.shape[0] != bins
                or edges[0] != lo or edges[-1] != hi or n < self.upto):
            self.source, self.upto = snap.series, 0
            edges = np.linspace(lo, hi, bins + 1) if hi > lo else np.linspace(lo - 0.5, hi + 0.5, bins + 1)
            counts = np.zeros(bins, dtype=np.int64)
            self.edges, self.counts = edges, counts
        if n > self.upto:
            new = returns[self.upto:n]
            added, _ = np.histogram(new, bins=bins, range=(edges[0], edges[-1]))
            counts += added
            self.upto = n
        return counts


def bin_count(n: int, width: int) -> int:
    """Rice's rule (2·n^(1/3) bins), at least 5 and at most one per column."""
    return max(1, min(width, max(5, math.ceil(2 * n ** (1 / 3)))))


def histogram_lines(counts: np.ndarray, height: int, peak: float, style: str, width: int | None = None) -> list[Text]:
    """Vertical bars, `height` rows, scaled so `peak` (a density) fills the height; the bins share
    `width` columns (default: one column per bin)."""
    bins = counts.shape[0]
    width = width or bins
    spans = [width // bins + (1 if i < width % bins else 0) for i in range(bins)]
    total = counts.sum()
    density = counts / total if total else counts.astype(float)
    eighths = np.zeros(bins, dtype=int) if peak <= 0 else np.ceil(density / peak * height * 8).astype(int)
    eighths[(counts > 0) & (eighths == 0)] = 1  # a bin with any episode shows at least a sliver
    rows = []
    for row in range(height - 1, -1, -1):
        level = np.clip(eighths - row * 8, 0, 8)
        line = "".join(BARS[int(v)] * span for v, span in zip(level, spans))
        rows.append(Text(line, style=style, no_wrap=True, overflow="crop"))
    return rows


def axis_line(lo: float, hi: float, width: int) -> Text:
    left, right = num(lo), num(hi)
    mid = num((lo + hi) / 2)
    gap = width - len(left) - len(right)
    if gap < len(mid) + 2:
        return Text(left + " " * max(1, gap) + right, style="dim", no_wrap=True, overflow="crop")
    pad_l = (width - len(mid)) // 2 - len(left)
    pad_r = width - len(left) - pad_l - len(mid) - len(right)
    return Text(left + " " * pad_l + mid + " " * max(1, pad_r) + right, style="dim", no_wrap=True,
                overflow="crop")


def progress_bar(done: int, total: int, width: int) -> str:
    """A bar of `width` cells with eighth-block resolution."""
    if total <= 0 or width <= 0:
        return ""
    frac = min(1.0, done / total)
    cells = frac * width
    full = int(cells)
    part = int((cells - full) * 8)
    bar = "█" * full + ("▏▎▍▌▋▊▉"[part - 1] if part and full < width else "")
    return bar + " " * (width - len(bar))
