"""textual-image's sixel widget, its images sent palette first (tui_eval/frames/sixel.py) and quantised to the
colour registers the terminal said it has."""

from __future__ import annotations

from textual.app import ComposeResult
from textual_image._sixel import SixelOptions
from textual_image.widget.sixel import Image, _ImageSixelImpl, _NoopRenderable

from tui_eval.frames.sixel import palette_first


class _PaletteFirst(_ImageSixelImpl):
    def _image_to_sixels(self, image, sixel_options=None, background=None) -> str:
        return palette_first(super()._image_to_sixels(image, sixel_options, background))


class PaletteFirstSixelImage(Image, Renderable=_NoopRenderable):
    def __init__(self, colors: int = 256, **kwargs):
        super().__init__(sixel_options=SixelOptions(colors=max(2, min(256, colors))), **kwargs)

    def compose(self) -> ComposeResult:
        yield _PaletteFirst(self.image, self._sixel_options)
