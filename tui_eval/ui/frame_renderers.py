"""Which renderer draws frames: Kitty graphics or Sixel where the terminal says it has them, else half-block
cells (truecolor, or 256 colours where COLORTERM does not promise truecolor).

textual-image asks the terminal (escape sequences, 0.1 s each at most) when it is first imported, which
only works before Textual owns the terminal: `choose` runs before the app starts.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from tui_eval.config.spec import BadInput
from tui_eval.frames.cells import EIGHT_BIT, TRUECOLOR

RENDERERS = ("auto", "halfblock", "kitty", "sixel", "off")


@dataclass(frozen=True)
class FrameOptions:
    """How the app shows frames: `renderer` one of halfblock, kitty, sixel, off; `colors` for half blocks."""

    show: bool = False  # open the frame panel at start (--frames)
    renderer: str = "halfblock"
    colors: str = TRUECOLOR
    fps: float = 10.0


def terminal_colors() -> str:
    return TRUECOLOR if os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit") else EIGHT_BIT


def choose(requested: str | None, show: bool, fps: float | None) -> FrameOptions:
    """The renderer for this terminal (`requested`: --frames-renderer, None for auto)."""
    requested = requested or "auto"
    if requested not in RENDERERS:
        raise BadInput(f"--frames-renderer expects one of {', '.join(RENDERERS[1:])}, got {requested!r}")
    if fps is not None and not 0 < fps <= 60:
        raise BadInput(f"--frames-fps expects a number of frames per second in (0, 60], got {fps:g}")
    renderer = requested
    if requested == "auto":
        renderer = _detect() if show else "halfblock"
    elif requested in ("kitty", "sixel"):
        import textual_image.widget  # noqa: F401  (asks the terminal its cell size now, before Textual starts)
    return FrameOptions(show=show, renderer=renderer, colors=terminal_colors(), fps=fps or 10.0)


def _detect() -> str:
    if not (sys.__stdout__ and sys.__stdout__.isatty() and sys.__stdin__ and sys.__stdin__.isatty()):
        return "halfblock"
    try:
        import textual_image.widget  # noqa: F401  (the cell size, asked while the terminal still answers)
        from textual_image.renderable import Image, SixelImage, TGPImage
    except Exception:  # a terminal that answers oddly: cells work everywhere
        return "halfblock"
    return "sixel" if Image is SixelImage else "kitty" if Image is TGPImage else "halfblock"
