"""`x`: pick the path whose explore setting to flip (a digit, or enter on the highlighted one)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class ExploreScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    ExploreScreen { align: center middle; }
    ExploreScreen > Vertical { width: 64; height: auto; border: round $accent; background: $surface;
                               padding: 0 1; }
    ExploreScreen OptionList { height: auto; max-height: 8; }
    """
    BINDINGS = [Binding("escape,q", "dismiss_none", "cancel")]

    def __init__(self, explore: dict[str, bool | None]):
        super().__init__()
        self.explore = explore
        self.names = list(explore)

    def compose(self) -> ComposeResult:
        options = []
        for i, (name, on) in enumerate(self.explore.items(), 1):
            now = "on" if on else "off"
            options.append(Option(f"{i}  {name}: explore {now} → {'off' if on else 'on'}", id=name))
        with Vertical() as box:
            box.border_title = "change explore"
            yield Static("Flip explore for which path? It takes effect on a new seed block.", classes="dim")
            yield OptionList(*options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def on_key(self, event) -> None:
        if event.character and event.character.isdigit():
            index = int(event.character) - 1
            if 0 <= index < len(self.names):
                event.stop()
                self.dismiss(self.names[index])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
