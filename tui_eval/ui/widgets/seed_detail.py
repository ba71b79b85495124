"""Both paths' results for one seed, side by side (looked up in the run log, off the event loop)."""

from __future__ import annotations

import math

from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from tui_eval.records import EpisodeRecord
from tui_eval.views.format import num

from .palette import path_style


class SeedDetail(Widget):
    DEFAULT_CSS = """
    SeedDetail { height: auto; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.paths: list[str] = []
        self.seed: int | None = None
        self.block: int | None = None
        self.records: list[EpisodeRecord] | None = None  # None: looking it up

    def show(self, paths: list[str], seed: int, block: int, records: list[EpisodeRecord] | None) -> None:
        self.paths, self.seed, self.block, self.records = list(paths), seed, block, records
        self.refresh(layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:
        return 4 + len(self.paths) + 3

    def render(self) -> Text | Table:
        if self.seed is None:
            return Text("press enter on an episode to see every path on its seed", style="dim")
        head = Text(no_wrap=True)
        head.append(f"seed {self.seed}", style="bold")
        head.append(f"  block {self.block}", style="dim")
        if self.records is None:
            return Text.assemble(head, "\n", Text("looking it up in the log…", style="dim italic"))
        latest: dict[str, EpisodeRecord] = {}
        for rec in self.records:
            latest[rec.path] = rec
        table = Table.grid(padding=(0, 1))
        table.add_column("")
        for name in self.paths:
            table.add_column(Text(name, style=path_style(self.paths, name)), justify="right")

        def row(label: str, value) -> None:
            table.add_row(Text(label, style="dim"), *(value(latest[n]) if n in latest else Text("not yet", style="dim")
                                                     for n in self.paths))

        table.add_row("", *(Text(n, style=path_style(self.paths, n)) for n in self.paths))
        row("return", lambda r: "—" if not math.isfinite(r.ret) else num(r.ret, 2))
        row("length", lambda r: str(r.length))
        row("success", lambda r: "—" if r.success is None else ("yes" if r.success else "no"))
        row("explore", lambda r: "—" if r.explore is None else ("on" if r.explore else "off"))
        row("invalid", lambda r: Text(r.reason or "yes", style="bold red") if r.invalid else "no")
        row("wall s", lambda r: num(r.wall_s, 2))
        if any(r.termination for r in latest.values()):  # a manager-based env (mjlab, Isaac Lab) names it
            row("ended by", lambda r: r.termination or "—")
        out = Table.grid()
        out.add_row(head)
        out.add_row(table)
        if len(self.paths) >= 2 and all(n in latest for n in self.paths[:2]):
            a, b = (latest[n] for n in self.paths[:2])
            if not (a.invalid or b.invalid):
                d = a.ret - b.ret
                style = "bold green" if abs(d) <= 1e-6 * (1 + max(abs(a.ret), abs(b.ret))) else "bold red"
                out.add_row(Text.assemble(("Δ return ", "dim"), (num(d, 2), style),
                                          ("  identical" if style == "bold green" else "", "green")))
        return out
