"""`d`: the doctor's findings for the running checkpoint, computed in a daemon thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class DiagnosisScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    DiagnosisScreen { align: center middle; }
    DiagnosisScreen > VerticalScroll { width: 90%; max-width: 120; height: auto; max-height: 90%;
                                       border: round $accent; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,d", "dismiss", "close")]

    def __init__(self, compute: Callable[[Callable[[str], None]], Any] | None, unavailable: str = ""):
        super().__init__()
        self.compute = compute
        self.unavailable = unavailable

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("diagnosis (d / esc: close)", style="bold"), id="diagnosis-title")
            yield Static(self.unavailable or "diagnosing: building the paths afresh …", id="diagnosis-body")

    def on_mount(self) -> None:
        if self.compute is not None:
            threading.Thread(target=self._work, name="tui-eval-doctor", daemon=True).start()

    def _say(self, text: str) -> None:
        try:
            self.app.call_from_thread(self._show, text)
        except Exception:  # the app or the screen is gone: nothing to show
            pass

    def _show(self, text: str) -> None:
        if self.is_attached:
            self.query_one("#diagnosis-body", Static).update(text)

    def _work(self) -> None:
        assert self.compute is not None
        try:
            diagnosis = self.compute(lambda step: self._say(f"diagnosing: {step} …"))
            self._say(diagnosis.text())
        except Exception as exc:
            self._say(f"diagnosis failed: {type(exc).__name__}: {exc}")
