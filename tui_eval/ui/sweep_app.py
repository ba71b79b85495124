"""The sweep's live leaderboard: the ranked checkpoints with their held-out means, anytime intervals against the
leader, episodes spent and who is out, and a forest plot by training iteration; refreshed after every round.
The same app runs a sweep in the foreground (rounds pushed with `show`) or views one from its log (`poll`):
`space` pauses; `q` stops the sweep it runs (the round in progress is dropped: only whole rounds are compared),
or leaves the one it views (which goes on, as an attached run does)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from tui_eval.views.sweep import board_lines, board_table, forest

POLL_S = 0.5  # how often a viewer reads the sweep's log


class SweepControls(Protocol):
    """What the keys steer: the sweep in this process, or one reached through its control channel."""

    def stop(self) -> None: ...

    def toggle_pause(self) -> str: ...  # the state after: "running" or "paused"

    def state(self) -> str: ...  # "running", "paused" or "stopping"


Poll = Callable[[], tuple[dict[str, Any] | None, str]]  # (the board, the sweep's state) read from its log


class SweepApp(App):
    CSS = """
    #status { height: auto; padding: 0 1; background: $boost; }
    #board { height: auto; padding: 0 1; text-wrap: nowrap; text-overflow: clip; }
    #verdict { height: auto; padding: 1 1 0 1; }
    #forest { height: auto; padding: 1 1 0 1; text-wrap: nowrap; text-overflow: clip; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space,p", "pause", "pause"),
        Binding("q", "stop", "quit"),
        Binding("ctrl+c", "interrupt", "interrupt", show=False, priority=True),
    ]

    def __init__(self, title: str, controls: SweepControls | None, poll: Poll | None = None,
                 on_hangup: Callable[[], None] | None = None, on_terminate: Callable[[], None] | None = None,
                 on_interrupt: Callable[[], None] | None = None):
        super().__init__()
        self.heading, self.controls, self.poll = title, controls, poll
        self.on_hangup, self.on_terminate, self.on_interrupt = on_hangup, on_terminate, on_interrupt
        self.result: dict[str, Any] | None = None
        self.state = "running"
        self.hung_up = False

    def compose(self) -> ComposeResult:
        yield Static(Text(f"{self.heading} · round 0", style="bold"), id="status")
        with VerticalScroll():
            yield Static("waiting for the first round …", id="board")
            yield Static("", id="verdict")
            yield Static("", id="forest")
        yield Footer()

    def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        if self.on_hangup is not None:
            loop.add_signal_handler(signal.SIGHUP, self._hang_up)
        if self.on_terminate is not None:
            loop.add_signal_handler(signal.SIGTERM, self._terminate)
        if self.poll is not None:
            self.read_log()
            self.set_interval(POLL_S, self.read_log)
        elif self.controls is not None:  # paused or stopped from elsewhere (an attached viewer, tui-eval stop)
            self.set_interval(POLL_S, self.read_state)

    def read_state(self) -> None:
        assert self.controls is not None
        if self.state in ("running", "paused") and self.controls.state() != self.state:
            self.state = self.controls.state()
            self.show_status()

    def read_log(self) -> None:
        assert self.poll is not None
        result, state = self.poll()
        self.state = state
        if result is not None:
            self.show(result, state in ("running", "paused"))
        else:
            self.show_status()

    def show(self, result: dict[str, Any], running: bool) -> None:
        """The sweep after a round (`running`: more rounds follow)."""
        self.result = result
        if not running and self.poll is None:
            self.state = "done"
        self.show_status()
        self.query_one("#board", Static).update(Text(board_table(result), no_wrap=True, overflow="crop"))
        self.query_one("#verdict", Static).update(Text("\n".join(board_lines(result))))
        width = max(20, self.size.width - 40)
        plot = forest(result, width)
        self.query_one("#forest", Static).update(Text("\n".join(
            ["held-out mean and anytime interval vs the leader, by training iteration"] + plot), no_wrap=True,
            overflow="crop"))

    def show_status(self, note: str = "") -> None:
        r = self.result
        where = f"round {r['rounds']} · {r['episodes']}/{r['budget']} episodes" if r else "round 0"
        if not note and self.poll is not None and self.state in ("running", "paused"):
            note = "q leaves, the sweep goes on"
        self.query_one("#status", Static).update(Text(
            f"{self.heading} · {where} · {self.state}" + (f" · {note}" if note else ""), style="bold"))

    def action_pause(self) -> None:
        if self.controls is None or self.state not in ("running", "paused"):
            self.show_status(f"pause: the sweep is {self.state}")
            return
        try:
            self.state = self.controls.toggle_pause()
        except (OSError, RuntimeError) as exc:
            self.show_status(f"pause: {exc}")
            return
        self.show_status()

    def action_stop(self) -> None:
        """In the app that runs the sweep: stop it and quit. In a viewer (`attach`): leave; the sweep goes on,
        as a run does (`tui-eval stop` ends it)."""
        if self.poll is None and self.controls is not None and self.state in ("running", "paused"):
            try:
                self.controls.stop()
            except (OSError, RuntimeError):
                pass  # the sweep ended meanwhile: nothing to stop
        self.exit()

    def action_interrupt(self) -> None:
        if self.on_interrupt is not None:
            self.on_interrupt()
        self.action_stop()

    def _hang_up(self) -> None:
        """The terminal is gone: leave without stopping the sweep (its process carries it on)."""
        assert self.on_hangup is not None
        self.hung_up = True
        self.on_hangup()
        self.exit()

    def _terminate(self) -> None:
        assert self.on_terminate is not None
        self.on_terminate()
        self.exit()
