"""The sweep's live leaderboard: the ranked checkpoints with their held-out means, anytime intervals against the
leader, episodes spent and who is out, and a forest plot by training iteration; refreshed after every round.
`q` stops after the round in progress is dropped (only whole rounds are compared); the table is printed after."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from tui_eval.views.sweep import board_lines, board_table, forest


class SweepApp(App):
    CSS = """
    #status { height: auto; padding: 0 1; background: $boost; }
    #board { height: auto; padding: 0 1; text-wrap: nowrap; text-overflow: clip; }
    #verdict { height: auto; padding: 1 1 0 1; }
    #forest { height: auto; padding: 1 1 0 1; text-wrap: nowrap; text-overflow: clip; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "stop", "stop and quit")]

    def __init__(self, title: str, stop: Any):
        super().__init__()
        self.heading, self.stop = title, stop
        self.result: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(f"{self.heading} · round 0", style="bold"), id="status")
        with VerticalScroll():
            yield Static("waiting for the first round …", id="board")
            yield Static("", id="verdict")
            yield Static("", id="forest")
        yield Footer()

    def show(self, result: dict[str, Any], running: bool) -> None:
        """The sweep after a round (`running`: more rounds follow)."""
        self.result = result
        state = "running" if running else "done"
        self.query_one("#status", Static).update(Text(
            f"{self.heading} · round {result['rounds']} · {result['episodes']}/{result['budget']} episodes · {state}",
            style="bold"))
        self.query_one("#board", Static).update(Text(board_table(result), no_wrap=True, overflow="crop"))
        self.query_one("#verdict", Static).update(Text("\n".join(board_lines(result))))
        width = max(20, self.size.width - 40)
        plot = forest(result, width)
        self.query_one("#forest", Static).update(Text("\n".join(
            ["held-out mean and anytime interval vs the leader, by training iteration"] + plot), no_wrap=True,
            overflow="crop"))

    def action_stop(self) -> None:
        self.stop.set()
        self.exit()
