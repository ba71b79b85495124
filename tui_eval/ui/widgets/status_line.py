"""One line above the footer: the last thing that happened (a new block, an export, an error)."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widget import Widget


class StatusLine(Widget):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $boost; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._text = Text("")
        self._sticky = Text("")
        self.messages: list[str] = []  # the recent ones, for tests and the help screen

    def say(self, message: str, style: str = "", sticky: bool = False) -> None:
        stamp = time.strftime("%H:%M:%S")
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(stamp + " ", style="dim")
        line.append(message, style=style)
        if sticky:
            self._sticky = line
        self._text = line
        self.messages = (self.messages + [message])[-50:]
        self.refresh()

    @property
    def text(self) -> str:
        return self._text.plain

    def render(self) -> Text:
        return self._text if self._text.plain else self._sticky
