"""A frame drawn as one sixel image that stays drawn: cells under it are never written while it shows.

A terminal erases sixel pixels wherever text is written over them. Textual writes a widget's every cell when it
repaints it, so an image widget that paints blank cells and then the image (textual-image's) makes the terminal
erase and redraw the picture on every repaint, and a repaint of only part of it, or a screenshot between the two,
leaves the picture half covered. Here each row of the image is a cursor move over its cells, and the last row of
whatever part is repainted sends that part of the image, at its place. The image is encoded palette first
(tui_eval/frames/sixel.py), quantised to the colour registers the terminal said it has, and sent again only when
Textual repaints its region: a new frame, the screen coming back from under another, a resize.

Where the widget has no image, or its screen is covered (a modal screen such as help dims it), its cells are
written blank, which erases the picture: a pane never shows a picture it no longer names.
"""

from __future__ import annotations

from PIL import Image as PILImage
from rich.segment import ControlType, Segment
from rich.style import Style
from textual.dom import NoScreen
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget
from textual_image._geometry import ImageSize
from textual_image._sixel import SixelOptions, image_to_sixels
from textual_image._terminal import get_cell_size

from tui_eval.frames.sixel import palette_first

_PLAIN = Style()


def _cursor_to(x: int, y: int) -> str:
    return f"\x1b[{y + 1};{x + 1}H"


class SixelFrame(Widget):
    """The largest picture with the frame's aspect that fits the space given (width and height auto)."""

    DEFAULT_CSS = "SixelFrame { width: auto; height: auto; }"

    def __init__(self, colors: int = 256, **kwargs):
        super().__init__(**kwargs)
        self.options = SixelOptions(colors=max(2, min(256, colors)))
        self.image: PILImage.Image | None = None
        self._encoded: tuple[tuple, str] | None = None  # (what was encoded, its sixel data)

    def show(self, image: PILImage.Image | None) -> None:
        """Draw `image` (None: no picture); the layout changes only when its size does."""
        before = None if self.image is None else self.image.size
        self.image, self._encoded = image, None
        self.refresh(layout=(None if image is None else image.size) != before)

    # ---- size
    def _geometry(self) -> ImageSize:
        width, height = self.image.size if self.image is not None else (0, 0)
        return ImageSize(width, height, width="auto", height="auto")

    def get_content_width(self, container: Size, viewport: Size) -> int:
        if self.image is None:
            return 0
        return self._geometry().get_cell_size(container.width, container.height or 2**32, get_cell_size())[0]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.image is None:
            return 0
        return self._geometry().get_cell_size(width, container.height or 2**32, get_cell_size())[1]

    # ---- drawing
    def render_lines(self, crop: Region) -> list[Strip]:
        if not self._drawable() or crop.width <= 0 or crop.height <= 0:
            return super().render_lines(crop)  # blank cells: they erase the picture
        skip = Strip([Segment(f"\x1b[{crop.width}C", _PLAIN, ((ControlType.CURSOR_FORWARD, crop.width),))],
                     cell_length=crop.width)
        where = self.screen.find_widget(self).region
        image = [
            Segment(_cursor_to(where.x + crop.x, where.y + crop.y), _PLAIN, ((ControlType.CURSOR_MOVE_TO, 0, 0),)),
            Segment(self._sixels(crop), _PLAIN, ((ControlType.CURSOR_FORWARD, 0),)),
            Segment(_cursor_to(where.x + crop.right, where.y + crop.bottom - 1), _PLAIN,
                    ((ControlType.CURSOR_MOVE_TO, 0, 0),)),
        ]
        return [skip] * (crop.height - 1) + [Strip(image, cell_length=crop.width)]

    def _drawable(self) -> bool:
        try:
            return self.image is not None and self.screen.is_active
        except NoScreen:
            return False

    def _sixels(self, crop: Region) -> str:
        cell = get_cell_size()
        _, color = self.background_colors
        background = (color.r, color.g, color.b, color.a)
        key = (crop, self.content_size, cell, background)
        if self._encoded is not None and self._encoded[0] == key:
            return self._encoded[1]
        assert self.image is not None
        width, height = self._geometry().get_pixel_size(self.content_size.width, self.content_size.height, cell)
        picture = self.image.resize((width, height)).crop(
            (crop.x * cell.width, crop.y * cell.height, crop.right * cell.width, crop.bottom * cell.height))
        data = palette_first(image_to_sixels(picture, self.options, background))
        self._encoded = (key, data)
        return data
