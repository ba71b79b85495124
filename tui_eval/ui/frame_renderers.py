"""Which renderer draws frames: Kitty graphics or Sixel where the terminal says it can draw what is sent
(terminal_query.py), else half-block cells (truecolor, or 256 colours where COLORTERM does not promise
truecolor). The frame panel's header names the renderer and why.

The terminal is asked (and textual-image asks it its cell size when first imported) only before Textual owns
it: `choose` runs before the app starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from tui_eval.errors import BadInput
from tui_eval.frames.cells import EIGHT_BIT, TRUECOLOR

RENDERERS = ("auto", "halfblock", "kitty", "sixel", "off")


@dataclass(frozen=True)
class FrameOptions:
    """How the app shows frames: `renderer` one of halfblock, kitty, sixel, off; `colors` for half blocks."""

    show: bool = False  # open the frame panel at start (--frames)
    renderer: str = "halfblock"
    colors: str = TRUECOLOR
    fps: float = 10.0
    why: str = ""  # why this renderer: what the terminal answered, or the option given
    sixel_colors: int = 256  # the terminal's sixel colour registers, at most 256


def terminal_colors() -> str:
    return TRUECOLOR if os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit") else EIGHT_BIT


def choose(requested: str | None, show: bool, fps: float | None) -> FrameOptions:
    """The renderer for this terminal (`requested`: --frames-renderer, None for auto)."""
    requested = requested or "auto"
    if requested not in RENDERERS:
        raise BadInput(f"--frames-renderer expects one of {', '.join(RENDERERS[1:])}, got {requested!r}")
    if fps is not None and not 0 < fps <= 60:
        raise BadInput(f"--frames-fps expects a number of frames per second in (0, 60], got {fps:g}")
    renderer, why, registers = requested, "--frames-renderer", None
    if requested == "auto" and show:
        from .terminal_query import ask_terminal, pick_renderer

        answers = ask_terminal()
        renderer, why = pick_renderer(answers, os.environ)
        registers = answers.registers if answers is not None else None
    elif requested == "auto":
        renderer, why = "halfblock", "the frame panel was not asked for at start (v opens it)"
    if renderer in ("kitty", "sixel"):
        import textual_image.widget  # noqa: F401  (asks the terminal its cell size now, before Textual starts)
    return FrameOptions(show=show, renderer=renderer, colors=terminal_colors(), fps=fps or 10.0, why=why,
                        sixel_colors=min(256, registers or 256))
