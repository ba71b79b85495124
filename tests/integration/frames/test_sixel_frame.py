"""The sixel frame widget's output in a real Textual app (Pilot): the rows under a picture are cursor moves, never
cells written over it; the picture is sent at its place, once per repaint, and not when a pane is given the same
frame again; it is erased (blank cells) when the pane has no picture or another screen covers it. What a real
xterm makes of it: tests/e2e/test_real_terminals.py."""

from __future__ import annotations

import re

import numpy as np
from textual._compositor import CompositorUpdate
from textual.app import App
from textual.geometry import Region
from textual.screen import ModalScreen
from textual.widgets import Static

from tests.integration.frames.test_frames_app import LUNAR, NO_RAY, _plan
from tests.support.ui import frame_panes
from tests.unit.test_terminal_graphics import decode
from tui_eval.frames.hub import Frame, Pane
from tui_eval.ui.app import EvalApp
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


def _written(app: App, monkeypatch) -> list[str]:
    """What the app writes to its terminal from now on (Pilot's headless driver writes nothing: the updates it
    would write are rendered here)."""
    out: list[str] = []
    display = app._display

    def spy(screen, renderable):
        if isinstance(renderable, CompositorUpdate):
            out.append(renderable.render_segments(app.console))
        return display(screen, renderable)

    monkeypatch.setattr(app, "_display", spy)
    return out


def _images(written: list[str]) -> int:
    return len(SIXEL.findall("".join(written)))


async def test_the_rows_under_a_sixel_picture_are_cursor_moves_and_the_picture_comes_last_at_its_place(monkeypatch):
    app = OnePane()
    async with app.run_test(size=(60, 30)) as pilot:
        pane = app.query_one(FramePane)
        image = _lunar_frame(3)
        written = _written(app, monkeypatch)
        pane.show(Pane("p", (0, 3), 1, 0.0, False, (Frame(1, 0.0, image),)), Frame(1, 0.0, image))
        await pilot.pause(0.2)
        widget = pane.image
        assert isinstance(widget, SixelFrame) and widget.region.height > 3
        first = _images(written)
        assert first >= 1  # (a new size lays the screen out again: it may be sent with each pass)
        lines = _output(widget)
        above, last = lines[:-1], lines[-1]
        assert all(re.fullmatch(r"\x1b\[\d+C", line) for line in above), above[:2]  # nothing printed
        assert len(SIXEL.findall(last)) == 1
        top_left = f"\x1b[{widget.region.y + 1};{widget.region.x + 1}H"
        assert last.startswith(top_left)  # at the widget's own place, not the crop's or the screen's
        picture = decode(last[last.index("\x1bP"):])
        assert abs(picture.shape[1] / picture.shape[0] - image.shape[1] / image.shape[0]) < 0.1
        assert (picture == (100, 100, 100)).all(axis=2).mean() > 0.1  # the ground, drawn white (sixel colours are %)

        pane.show(Pane("p", (0, 3), 1, 0.0, False, (Frame(1, 0.0, image.copy()),)), Frame(1, 0.0, image.copy()))
        await pilot.pause(0.2)
        assert _images(written) == first  # the same frame again: nothing sent

        await app.push_screen(Cover())
        await pilot.pause(0.2)
        assert not any(SIXEL.search(line) for line in _output(widget))  # covered: blank cells erase it
        app.pop_screen()
        await pilot.pause(0.2)
        assert _images(written) > first  # uncovered: sent again

        pane.show(Pane("p", (0, 4)), None)  # a path that has yet to play the seed shown
        await pilot.pause(0.2)
        assert widget.image is None and widget.region.height == 0 and "waiting" in pane.message_text


async def test_the_live_run_under_the_frame_panel_does_not_make_it_send_pictures_again(tmp_path, apps, monkeypatch):
    """The live LunarLander demo with the panel open: the run screen under it changes all the time (Textual passes
    its repaints up to the screen on top); sixel images are sent for new frames only."""
    pictures: list[object] = []
    show = SixelFrame.show

    def counted(widget, image):
        pictures.append(image)
        return show(widget, image)

    monkeypatch.setattr(SixelFrame, "show", counted)
    app = EvalApp(_plan(tmp_path, LUNAR, *NO_RAY), frames=FrameOptions(show=True, fps=10, renderer="sixel"))
    apps.append(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await frame_panes(pilot, app)
        written, shown = _written(app, monkeypatch), len(pictures)
        # at least 3 s of the live run and 3 new frames (a loaded machine draws fewer than --fps), at most 30 s
        for tenth in range(300):
            await pilot.pause(0.1)
            if tenth >= 30 and sum(p is not None for p in pictures[shown:]) >= 3:
                break
        new_frames = sum(p is not None for p in pictures[shown:])
        assert new_frames > 0, "the live run showed no new frame in 30 s"  # else sending nothing would pass
        assert 1 <= _images(written) <= new_frames + 2, (_images(written), new_frames)  # sent, and only when new
        await pilot.press("q")
