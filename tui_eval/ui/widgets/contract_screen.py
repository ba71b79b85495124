"""`n`: the export's deployment contract item by item against the env the run builds (✓ agreed, perhaps rounded;
✗ mismatched, with both values; – the export does not say), from the run's log."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui_eval.views.format import contract_headline, contract_mark

NONE = ("this run's export carries no deployment contract (a robot export that states its joints, gains, scales "
        "and observation terms carries one; its graph at least says its sizes and normalizer)")
MARK_STYLE = {"✓": "bold green", "✗": "bold red", "–": "dim"}


def _short(value: Any, limit: int = 48) -> str:
    text = "—" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def contract_table(contract: dict[str, Any] | None) -> Table | Text:
    if not contract:
        return Text(NONE)
    table = Table(title=contract_headline(contract), title_justify="left", caption=contract["source"],
                  caption_justify="left", expand=False)
    for header in ("", "item", "export", "env", "note"):
        table.add_column(header, no_wrap=header in ("", "item"), overflow="fold")
    for item in contract.get("items", []):
        mark = contract_mark(item)
        table.add_row(Text(mark, style=MARK_STYLE[mark]), item["name"], _short(item.get("export")),
                      _short(item.get("env")), item.get("note") or "")
    return table


class ContractScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ContractScreen { align: center middle; }
    ContractScreen > VerticalScroll { width: 95%; max-width: 140; height: auto; max-height: 90%;
                                      border: round $accent; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,n", "dismiss", "close")]

    def __init__(self, contract: dict[str, Any] | None):
        super().__init__()
        self.contract = contract

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("deployment contract (n / esc: close)", style="bold"), id="contract-title")
            yield Static(contract_table(self.contract), id="contract-table")
            for note in (self.contract or {}).get("notes", []):
                yield Static(Text(f"note: {note}", style="italic"))
