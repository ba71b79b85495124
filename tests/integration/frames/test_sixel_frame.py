"""The sixel frame widget's output in a real Textual app (Pilot): the rows under a picture are cursor moves, never
cells written over it; the picture is sent at its place, once per repaint, and not when a pane is given the same
frame again; it is erased (blank cells) when the pane has no picture or another screen covers it. What a real
xterm makes of it: tests/e2e/test_real_terminals.py."""

from __future__ import annotations

import re

import numpy as np
from textual.app import App
from textual.geometry import Region
from textual.screen import ModalScreen
from textual.widgets import Static

from tests.unit.test_terminal_graphics import decode
from tui_eval.frames.hub import Frame, Pane
from tui_eval.ui.frame_renderers import FrameOptions
from tui_eval.ui.widgets.frame_pane import FramePane
from tui_eval.ui.widgets.sixel_image import SixelFrame

SIXEL = re.compile(r"\x1bP[0-9;]*q")


def _lunar_frame(seed: int) -> np.ndarray:
    import gymnasium as gym

    env = gym.make("LunarLander-v3", render_mode="rgb_array")
    env.reset(seed=seed)
    return env.render()[::4, ::4].copy()  # 150 x 100, as the hub keeps frames scaled down


class OnePane(App):
    def compose(self):
        yield Static("above")
        yield FramePane(["p"], "p", FrameOptions(renderer="sixel"))


class Cover(ModalScreen):
    def compose(self):
        yield Static("help")


def _output(widget: SixelFrame) -> list[str]:
    region = widget.region
    return ["".join(seg.text for seg in strip) for strip in widget.render_lines(Region(0, 0, *region.size))]


async def test_the_rows_under_a_sixel_picture_are_cursor_moves_and_the_picture_comes_last_at_its_place():
    app = OnePane()
    async with app.run_test(size=(60, 30)) as pilot:
        pane = app.query_one(FramePane)
        image = _lunar_frame(3)
        pane.show(Pane("p", (0, 3), 1, 0.0, False, (Frame(1, 0.0, image),)), Frame(1, 0.0, image))
        await pilot.pause(0.2)
        widget = pane.image
        assert isinstance(widget, SixelFrame) and widget.region.height > 3
        lines = _output(widget)
        above, last = lines[:-1], lines[-1]
        assert all(re.fullmatch(r"\x1b\[\d+C", line) for line in above), above[:2]  # nothing printed
        assert len(SIXEL.findall(last)) == 1
        top_left = f"\x1b[{widget.region.y + 1};{widget.region.x + 1}H"
        assert last.startswith(top_left)  # at the widget's own place, not the crop's or the screen's
        picture = decode(last[last.index("\x1bP"):])
        assert abs(picture.shape[1] / picture.shape[0] - image.shape[1] / image.shape[0]) < 0.1
        assert (picture == (100, 100, 100)).all(axis=2).mean() > 0.1  # the ground, drawn white (sixel colours are %)

        sent = widget.sent
        pane.show(Pane("p", (0, 3), 1, 0.0, False, (Frame(1, 0.0, image.copy()),)), Frame(1, 0.0, image.copy()))
        await pilot.pause(0.2)
        assert widget.sent == sent  # the same frame again: nothing repainted, nothing sent

        await app.push_screen(Cover())
        await pilot.pause(0.2)
        assert not any(SIXEL.search(line) for line in _output(widget))  # covered: blank cells erase it
        app.pop_screen()
        await pilot.pause(0.2)
        assert SIXEL.search(_output(widget)[-1])

        pane.show(Pane("p", (0, 4)), None)  # a path that has yet to play the seed shown
        await pilot.pause(0.2)
        assert widget.image is None and widget.region.height == 0 and "waiting" in pane.message_text
