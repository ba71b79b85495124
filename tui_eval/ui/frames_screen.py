"""The frame panel (`v`, or `--frames`): both paths on the same seed side by side, or one path.

A daemon thread asks the source for frames at `--frames-fps` (the live engine's hub, or the run's owner
over its control channel) and posts the newest view; a view that arrives while another waits replaces
it (frames are dropped, never queued). Paused (space, or the run paused), the frame holds still and
←/→ step through the kept frames of the episode shown.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Self

from rich.text import Text
from textual.binding import Binding
from textual.containers import Horizontal
from textual.geometry import Region
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui_eval.errors import first_line
from tui_eval.frames.hub import FrameView, Key

from .frame_renderers import FrameOptions
from .run_view import RunHost
from .widgets.frame_pane import FramePane


class FramesArrived(Message):
    def __init__(self, view: FrameView | None, history: bool, error: str | None = None) -> None:
        super().__init__()
        self.view, self.history, self.error = view, history, error

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FramesArrived) and message.history == self.history


class FramesScreen(Screen):
    BINDINGS = [
        Binding("escape,v", "close", "back"),
        Binding("space,p", "pause", "pause"),
        Binding("left", "step(-1)", "◀ frame"),
        Binding("right", "step(1)", "frame ▶"),
        Binding("left_square_bracket", "seed(1)", "older seed", show=False),
        Binding("right_square_bracket", "seed(-1)", "newer seed", show=False),
        Binding("s", "switch", "one/both"),
        Binding("c", "clip", "clip", show=False),
    ]
    DEFAULT_CSS = """
    FramesScreen #frames-title { height: 1; padding: 0 1; background: $panel; }
    FramesScreen #frames-note { height: 1; padding: 0 1; color: $text-muted; }
    FramesScreen #frames-row { height: 1fr; }
    """

    def __init__(self, paths: list[str], options: FrameOptions, host: RunHost, toggle_pause: Callable[[], None],
                 record_clip: Callable[[int, list[str]], None]):
        """`host` holds the source frames come from; `toggle_pause` and `record_clip` are the run screen's."""
        super().__init__()
        self.paths, self.options, self.host = list(paths), options, host
        self._toggle_pause, self._record_clip = toggle_pause, record_clip
        self.views = [list(paths)] if len(paths) > 1 else []
        self.views += [[p] for p in paths]
        self.view_index = 0
        self.key: Key | None = None  # a seed chosen with [ / ]; None follows the newest shared one
        self.frozen = False
        self.back = 0  # while frozen: frames back from each pane's newest
        self.view: FrameView | None = None
        self._title_shown = Text()
        self._stop = threading.Event()
        self._history_wanted = threading.Event()
        self.panes = {p: FramePane(self.paths, p, options, id=f"frame-{i}") for i, p in enumerate(self.paths)}

    @property
    def shown(self) -> list[str]:
        return self.views[self.view_index]

    def compose(self):
        yield Static(id="frames-title")
        with Horizontal(id="frames-row"):
            yield from self.panes.values()
        yield Static(id="frames-note")
        yield Footer()

    def on_mount(self) -> None:
        self._arrange()
        self.query_one("#frames-title", Static).update(Text("frames · waiting for the paths to load…", style="bold"))
        threading.Thread(target=self._poll, name="tui-eval-frames", daemon=True).start()

    def on_unmount(self) -> None:
        self._stop.set()

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        """Regions alone come from the run screen under this one (Textual passes a screen's changes up, for screens
        that let it show through): this screen hides them, and a repaint would send a terminal's pictures again."""
        if regions and not layout and not recompose:
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    # ---- the poller (a daemon thread)
    def _poll(self) -> None:
        period = 1.0 / self.options.fps
        while not self._stop.wait(period):
            history = self._history_wanted.is_set()
            if self.frozen and not history:
                continue
            source = self.host.source
            if source is None:
                continue
            try:
                view = source.frames(self.shown, self.key, history, self._pixels())
            except Exception as exc:  # a channel that went away: say so and keep trying
                self.post_message(FramesArrived(None, history, first_line(exc)))
                continue
            self._history_wanted.clear()
            self.post_message(FramesArrived(view, history))

    def _pixels(self) -> tuple[int, int]:
        """Pixels a pane can show (what a viewer asks for over the wire)."""
        pane = self.panes[self.shown[0]]
        per_cell = 1 if self.options.renderer == "halfblock" else 8
        return max(8, pane.size.width * per_cell), max(8, pane.size.height * 2 * per_cell)

    # ---- showing
    def on_frames_arrived(self, message: FramesArrived) -> None:
        if message.error is not None:
            self._note(f"frames unavailable: {message.error}")
            return
        if self.frozen and not message.history:
            return
        self.view = message.view
        self._draw()

    def _draw(self) -> None:
        view = self.view
        state = getattr(self.host.source, "state", "")
        if view is None:
            for name in self.shown:
                self.panes[name].show(None, None)
            self._note("frames come from a live run; this run has finished (tui-eval record CKPT --seed S makes a clip)"
                       if self.host.source is not None else "loading…")
            return
        for pane in view.panes:
            frames = pane.frames
            frame = frames[max(0, len(frames) - 1 - self.back)] if frames else None
            note = f"frame {len(frames) - self.back}/{len(frames)}" if self.frozen and frames else ""
            self.panes[pane.path].show(pane, frame, note)
        self._title(view, state)

    def _title(self, view: FrameView, state: str) -> None:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("frames", style="bold")
        if view.key is not None:
            title.append(f" · seed {view.key[1]}", style="bold")
            shared = "(newest both have)" if view.key in view.keys else "(newest: not every path has it yet)"
            title.append(" (chosen)" if self.key is not None else "" if len(self.shown) == 1 else f" {shared}")
        title.append(f" · {' vs '.join(self.shown)}")
        if self.frozen or state == "paused":
            title.append(" · PAUSED", style="bold yellow")
        title.append(f" · ≤{self.options.fps:g} fps · {self.options.renderer}", style="dim")
        if self.options.why:  # last: a narrow terminal cuts the reason, not the seed
            title.append(f" ({self.options.why})", style="dim")
        if title != self._title_shown:  # one line, no reflow: a reflow repaints the pictures (sends them again)
            self._title_shown = title
            self.query_one("#frames-title", Static).update(title, layout=False)

    def _note(self, text: str) -> None:
        self.query_one("#frames-note", Static).update(Text(text, style="italic"))

    def _arrange(self) -> None:
        for name, pane in self.panes.items():
            pane.display = name in self.shown
        self._note("space: pause · ←/→: step through the kept frames · [ ]: older/newer seed · s: one path/both · "
                   "c: clip of this seed · v: back")

    # ---- keys
    def action_close(self) -> None:
        self.app.pop_screen()

    def action_pause(self) -> None:
        """Pause the run (if it can be paused here) and hold the frame still; again to go on."""
        if self.host.source is not None and not self.host.readonly:
            self._toggle_pause()
        self._freeze(not self.frozen)

    def _freeze(self, frozen: bool) -> None:
        self.frozen, self.back = frozen, 0
        if frozen:
            self._history_wanted.set()  # the kept frames of the episode shown, once
        if self.view is not None:
            self._draw()

    def action_step(self, delta: int) -> None:
        if not self.frozen:
            self._freeze(True)
            return
        longest = max((len(p.frames) for p in self.view.panes), default=1) if self.view else 1
        self.back = min(max(0, self.back - delta), longest - 1)
        self._draw()

    def action_seed(self, delta: int) -> None:
        view = self.view
        keys = list(view.keys) if view is not None else []
        if view is None or not keys:
            return
        current = keys.index(view.key) if view.key in keys else 0
        index = min(max(0, current + delta), len(keys) - 1)
        self.key = None if index == 0 else keys[index]
        self._history_wanted.set() if self.frozen else None
        self.back = 0

    def action_switch(self) -> None:
        self.view_index = (self.view_index + 1) % len(self.views)
        self._arrange()
        self._history_wanted.set() if self.frozen else None

    def action_clip(self) -> None:
        if self.view is None or self.view.key is None:
            self._note("no seed shown yet: nothing to record")
            return
        self._record_clip(self.view.key[1], self.shown)
