"""One line above the footer: the last thing that happened (a new block, an export, an error).

A sticky message (a failed path, the read-only note) comes back once the newer ones are old."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widget import Widget

STALE_S = 15.0


class StatusLine(Widget):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $boost; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._line = Text("")
        self._sticky: Text | None = None
        self._said_at = 0.0
        self.messages: list[str] = []  # the recent ones, for tests and the help screen

    def say(self, message: str, style: str = "", sticky: bool = False) -> None:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(time.strftime("%H:%M:%S") + " ", style="dim")
        line.append(message, style=style)
        if sticky:
            self._sticky = line
        self._line = line
        self._said_at = time.monotonic()
        self.messages = (self.messages + [message])[-50:]
        self.refresh()

    def age(self) -> None:
        """Called now and then: bring the sticky message back when the last one is stale."""
        if self._sticky is not None and self._line is not self._sticky and \
                time.monotonic() - self._said_at > STALE_S:
            self._line = self._sticky
            self.refresh()

    @property
    def text(self) -> str:
        return self._line.plain

    def render(self) -> Text:
        return self._line
