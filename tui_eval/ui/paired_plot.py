"""The paired scatter in text: each seed's return on path A (x) against path B (y), in braille dots (2x4 per
cell), readable over plain SSH. The identity line is dim; a cell holding a seed whose results differ is
yellow, one holding only identical seeds green; a seed with an invalid episode is a red `×` on the edge of
the invalid side; the selected seed is `◉`. Binned with numpy: a redraw costs O(points) in C, not Python."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from rich.text import Text

from tui_eval.views.format import num
from tui_eval.views.paired import PairedPoint

# braille dot bits by (column, row) inside a cell: U+2800 + the sum of the dots set
_DOT = np.array([[0x01, 0x02, 0x04, 0x40], [0x08, 0x10, 0x20, 0x80]], dtype=np.int64)
STYLE_SAME, STYLE_DIFFERS, STYLE_INVALID, STYLE_LINE = "green", "bold yellow", "bold red", "grey42"
SELECTED = "◉"
AXIS_WIDTH = 9  # the y axis' labels


def value_range(points: Sequence[PairedPoint]) -> tuple[float, float]:
    """One scale for both axes: the finite returns of every pair, a little padded."""
    values = [v for p in points for v, ok in ((p.a, p.valid_a), (p.b, p.valid_b)) if ok and math.isfinite(v)]
    if not values:
        return 0.0, 1.0
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.02 if hi > lo else max(1.0, abs(lo) * 0.05)
    return lo - pad, hi + pad


def _cells(values: np.ndarray, lo: float, hi: float, dots: int) -> np.ndarray:
    return np.clip(np.round((values - lo) / (hi - lo) * (dots - 1)), 0, dots - 1).astype(np.int64)


def scatter_lines(points: Sequence[PairedPoint], width: int, height: int, a: str, b: str,
                  selected: PairedPoint | None = None) -> list[Text]:
    """`height` lines of `width` cells: the plot with its y axis (path B) on the left and, under it, the x axis
    (path A)."""
    plot_w, plot_h = max(4, width - AXIS_WIDTH), max(2, height - 2)
    lo, hi = value_range(points)
    n = len(points)
    xa = np.array([p.a if p.valid_a else lo for p in points], dtype=float).reshape(n)
    yb = np.array([p.b if p.valid_b else lo for p in points], dtype=float).reshape(n)
    xa, yb = np.nan_to_num(xa, nan=lo), np.nan_to_num(yb, nan=lo)
    px, py = _cells(xa, lo, hi, plot_w * 2), (plot_h * 4 - 1) - _cells(yb, lo, hi, plot_h * 4)
    bits = np.zeros((plot_h, plot_w), dtype=np.int64)
    differs = np.zeros((plot_h, plot_w), dtype=bool)
    invalid = np.zeros((plot_h, plot_w), dtype=bool)
    valid = np.array([p.valid for p in points], dtype=bool).reshape(n)
    same = np.array([p.identical for p in points], dtype=bool).reshape(n)
    cx, cy = px // 2, py // 4
    np.bitwise_or.at(bits, (cy[valid], cx[valid]), _DOT[px[valid] % 2, py[valid] % 4])
    differs[cy[valid & ~same], cx[valid & ~same]] = True
    invalid[cy[~valid], cx[~valid]] = True
    line = np.zeros((plot_h, plot_w), dtype=np.int64)  # the identity line, where no seed is
    dx = np.arange(plot_w * 2)
    dy = (plot_h * 4 - 1) - np.round(dx / max(1, plot_w * 2 - 1) * (plot_h * 4 - 1)).astype(np.int64)
    np.bitwise_or.at(line, (dy // 4, dx // 2), _DOT[dx % 2, dy % 4])
    mark = None
    if selected is not None:
        sx = _cells(np.array([selected.a if selected.valid_a else lo]), lo, hi, plot_w * 2)[0] // 2
        sy = ((plot_h * 4 - 1) - _cells(np.array([selected.b if selected.valid_b else lo]), lo, hi, plot_h * 4)[0]) // 4
        mark = (int(sy), int(sx))
    lines = []
    for row in range(plot_h):
        label = num(hi, 3) if row == 0 else num(lo, 3) if row == plot_h - 1 else (b[:AXIS_WIDTH - 2] if
                                                                                   row == plot_h // 2 else "")
        text = Text(f"{label:>{AXIS_WIDTH - 2}} │", style="dim", no_wrap=True, overflow="crop")
        for col in range(plot_w):
            text.append(*_cell(row, col, bits, differs, invalid, line, mark))
        lines.append(text)
    lines.append(Text(" " * (AXIS_WIDTH - 1) + "└" + "─" * plot_w, style="dim", no_wrap=True, overflow="crop"))
    left, right = num(lo, 3), num(hi, 3)
    middle = f"{a} →"
    gap = max(1, plot_w - len(left) - len(right) - len(middle))
    lines.append(Text(" " * AXIS_WIDTH + left + " " * (gap // 2) + middle + " " * (gap - gap // 2) + right,
                      style="dim", no_wrap=True, overflow="crop"))
    return lines


def _cell(row: int, col: int, bits: np.ndarray, differs: np.ndarray, invalid: np.ndarray, line: np.ndarray,
          mark: tuple[int, int] | None) -> tuple[str, str]:
    if mark == (row, col):
        return SELECTED, "bold reverse"
    if invalid[row, col]:
        return "×", STYLE_INVALID
    if bits[row, col]:
        return chr(0x2800 + int(bits[row, col])), STYLE_DIFFERS if differs[row, col] else STYLE_SAME
    if line[row, col]:
        return chr(0x2800 + int(line[row, col])), STYLE_LINE
    return " ", ""


def by_interest(points: Sequence[PairedPoint]) -> list[PairedPoint]:
    """The order the cursor walks: seeds with an invalid episode, then differing seeds by |A − B| (largest
    first), then identical seeds, newest first."""
    def key(item: tuple[int, PairedPoint]) -> tuple[int, float, int]:
        i, p = item
        if not p.valid:
            return 0, 0.0, -i
        if not p.identical:
            gap = abs(p.a - p.b)
            return 1, -(gap if math.isfinite(gap) else math.inf), -i
        return 2, 0.0, -i

    return [p for _, p in sorted(enumerate(points), key=key)]
