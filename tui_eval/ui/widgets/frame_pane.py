"""One path's frame with its label (path, seed, step, return so far), drawn as half-block cells or, where
the terminal has them, Kitty graphics / Sixel (textual-image). Scaled to the pane, aspect kept."""

from __future__ import annotations

import numpy as np
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.text import Text
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from tui_eval.frames.cells import halfblock_lines
from tui_eval.frames.hub import Frame, Pane
from tui_eval.views.format import num

from ..frame_renderers import FrameOptions
from .palette import path_style


class _Cells:
    """A Rich renderable: the image as half-block cells filling the space it is given."""

    def __init__(self, image: np.ndarray, colors: str):
        self.image, self.colors = image, colors

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows = options.height or options.max_height
        for line in halfblock_lines(self.image, options.max_width, rows, self.colors):
            yield from line
            yield Segment.line()


class CellImage(Widget):
    DEFAULT_CSS = "CellImage { height: 1fr; width: 1fr; }"

    def __init__(self, color_mode: str, **kwargs):
        super().__init__(**kwargs)
        self.color_mode = color_mode
        self.image: np.ndarray | None = None

    def show(self, image: np.ndarray | None) -> None:
        self.image = image
        self.refresh()

    def render(self):
        return Text("") if self.image is None else _Cells(self.image, self.color_mode)


def _graphics_widget(options: FrameOptions) -> Widget:
    if options.renderer == "sixel":
        from .sixel_image import SixelFrame

        return SixelFrame(options.sixel_colors)
    from textual_image.widget import TGPImage

    widget = TGPImage()
    widget.styles.height, widget.styles.width = "auto", "auto"  # the largest size with the frame's aspect
    return widget


class FramePane(Vertical):
    """A label line and the frame under it; a message instead when the path has no frame to show."""

    DEFAULT_CSS = """
    FramePane { width: 1fr; height: 1fr; padding: 0 1; }
    FramePane > .frame-label { height: 1; }
    FramePane > .frame-message { height: auto; color: $text-muted; }
    """

    def __init__(self, paths: list[str], path: str, options: FrameOptions, **kwargs):
        super().__init__(**kwargs)
        self.paths, self.path, self.options = paths, path, options
        self.label = Static(Text(path, style=path_style(paths, path)), classes="frame-label")
        self.message = Static("", classes="frame-message")
        self.message.display = False
        self.image: Widget = (CellImage(options.colors) if options.renderer == "halfblock"
                              else _graphics_widget(options))
        self.frame: Frame | None = None
        self.drawn: np.ndarray | None = None  # the picture on screen
        self.label_text = Text(path)  # what the label and message say (read by tests and the title)
        self.message_text = ""

    def compose(self):
        yield self.label
        yield self.message
        yield self.image

    def show(self, pane: Pane | None, frame: Frame | None, note: str = "") -> None:
        """`frame` of `pane` (one of its kept frames), or the reason there is none."""
        self.frame = frame
        label = Text(no_wrap=True, overflow="ellipsis")
        label.append(self.path, style=path_style(self.paths, self.path))
        if pane is not None and pane.key is not None:
            label.append(f"  seed {pane.key[1]}", style="bold")
            if frame is not None:
                label.append(f"  step {frame.step}  return {num(frame.ret, 2)}")
            if pane.done and (frame is None or frame.step == pane.step):
                label.append("  (episode over)", style="dim")
        if note:
            label.append(f"  {note}", style="dim italic")
        if label != self.label_text:  # one line, no reflow: a reflow repaints the picture (sixel: sends it again)
            self.label.update(label, layout=False)
            self.label_text = label
        message = ""
        if frame is None:
            message = (pane.problem if pane is not None and pane.problem else
                       "waiting for this path to play the seed shown…")
        if message != self.message_text:
            self.message_text = message
            self.message.update(Text(message, style="italic"))
            self.message.display = bool(message)
        self._draw(None if frame is None else frame.image)  # a pane that waits shows no picture

    def _draw(self, image: np.ndarray | None) -> None:
        """Draw `image`, or clear the picture; the same picture again is not redrawn (a terminal would erase and
        redraw a graphics image, ten times a second while a run is paused or over)."""
        drawn = self.drawn
        if image is None and drawn is None or image is not None and drawn is not None and np.array_equal(image, drawn):
            return
        self.drawn = image
        if isinstance(self.image, CellImage):
            self.image.show(image)
            return
        from PIL import Image

        picture = None if image is None else Image.fromarray(image)
        if self.options.renderer == "sixel":
            self.image.show(picture)  # type: ignore[attr-defined]
        else:
            self.image.image = picture  # type: ignore[attr-defined]
