"""Sixel data every terminal draws alike: the colour registers all defined before the first pixel.

An encoder may define a register where it is first used, between bands (textual-image does). xterm (379, as
`-ti vt340`) then paints pixels already drawn in the colour defined last: most of a LunarLander frame came out
one flat grey. Defining every colour in the header, as a VT340's own images do, draws the frame as encoded.
Each distinct colour gets its own register, so an encoder that reuses a register for another colour mid-image
is drawn right too."""

from __future__ import annotations

import re

_COLOUR = re.compile(r"#(\d+)(?:;(\d+);(\d+);(\d+);(\d+))?")
_RASTER = re.compile(r'"\d+;\d+(?:;\d+;\d+)?')


def palette_first(data: str) -> str:
    """`data` (one sixel image: DCS ... q [raster] body ST) with every colour defined up front."""
    start = data.find("q")
    if start < 0:
        return data
    head_end = start + 1
    raster = _RASTER.match(data, head_end)
    if raster is not None:
        head_end = raster.end()
    registers: dict[tuple[str, ...], int] = {}  # (space, x, y, z) -> the register it is drawn with
    current: dict[str, int] = {}  # the encoder's register -> ours, as its last definition left it

    def select(match: re.Match[str]) -> str:
        number, colour = match.group(1), match.groups()[1:]
        if colour[0] is not None:
            current[number] = registers.setdefault(colour, len(registers))
        return f"#{current.get(number, int(number))}"

    body = _COLOUR.sub(select, data[head_end:])
    palette = "".join(f"#{n};{';'.join(colour)}" for colour, n in registers.items())
    return data[:head_end] + palette + body
