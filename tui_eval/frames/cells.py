"""A frame as terminal cells: each cell is '▀', its foreground the upper pixel, its background the lower one.

Works in any terminal with colour, over plain SSH. Truecolor by default; `colors="256"` maps every pixel
to xterm's 256-colour cube or grey ramp (never the 16 themed colours, whose RGB the terminal decides).
Vectorised with numpy and run-length merged per row, with one Style per colour pair: a 100x60-cell frame
costs a few milliseconds, where per-pixel renderers (rich-pixels, textual-image's half cells) take 70-100 ms
(measured here), too much at 10 frames a second beside the evaluation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rich.color import Color
from rich.segment import Segment
from rich.style import Style

from tui_eval.frames.images import fit

TRUECOLOR, EIGHT_BIT = "truecolor", "256"
UPPER_HALF = "▀"
_CUBE = np.array([0, 95, 135, 175, 215, 255])


def cell_size(width: int, height: int, cols: int, rows: int) -> tuple[int, int]:
    """Cells (cols, rows) that a width x height frame fills inside the box, aspect kept (a cell holds two
    square-ish pixels, one above the other); scaled up or down."""
    scale = min(cols / width, 2 * rows / height)
    return max(1, min(cols, round(width * scale))), max(1, min(rows, round(height * scale / 2)))


def xterm256(pixels: np.ndarray) -> np.ndarray:
    """The nearest xterm-256 colour index (16-255) of each RGB pixel: the 6x6x6 cube or the 24 greys."""
    rgb = pixels.astype(np.int32)
    level = np.abs(rgb[..., None] - _CUBE).argmin(axis=-1)  # nearest cube level per channel
    cube_index = 16 + 36 * level[..., 0] + 6 * level[..., 1] + level[..., 2]
    cube_error = ((_CUBE[level] - rgb) ** 2).sum(axis=-1)
    grey_step = np.clip(np.round((rgb.mean(axis=-1) - 8) / 10), 0, 23).astype(np.int32)
    grey_error = ((8 + 10 * grey_step[..., None] - rgb) ** 2).sum(axis=-1)
    return np.where(grey_error < cube_error, 232 + grey_step, cube_index)


def halfblock_lines(image: np.ndarray, cols: int, rows: int, colors: str = TRUECOLOR) -> list[list[Segment]]:
    """`image` (H, W, 3 uint8) as at most `rows` lines of at most `cols` cells, aspect kept."""
    width, height = cell_size(image.shape[1], image.shape[0], cols, rows)
    pixels = fit(image, width, 2 * height, upscale=True)
    if pixels.shape[:2] != (2 * height, width):  # rounding: pad to whole cells with the last row/column
        pixels = np.pad(pixels, ((0, 2 * height - pixels.shape[0]), (0, width - pixels.shape[1]), (0, 0)),
                        mode="edge")[: 2 * height, :width]
    make: Callable[[int], Color] = _rgb
    if colors == EIGHT_BIT:
        codes = xterm256(pixels).astype(np.int64)
        make = Color.from_ansi
    else:
        codes = (pixels[..., 0].astype(np.int64) << 16) | (pixels[..., 1].astype(np.int64) << 8) | pixels[..., 2]
    pairs = (codes[0::2] << 24) | codes[1::2]  # one number per cell: upper and lower colour
    styles: dict[int, Style] = {}
    lines = []
    for row in pairs:
        starts = np.flatnonzero(np.diff(row, prepend=-1))
        ends = np.append(starts[1:], len(row))
        line = []
        for start, end in zip(starts.tolist(), ends.tolist()):
            pair = int(row[start])
            style = styles.get(pair)
            if style is None:
                style = styles[pair] = Style(color=make(pair >> 24), bgcolor=make(pair & 0xFFFFFF))
            line.append(Segment(UPPER_HALF * (end - start), style))
        lines.append(line)
    return lines


def _rgb(code: int) -> Color:
    return Color.from_rgb(code >> 16, (code >> 8) & 0xFF, code & 0xFF)
