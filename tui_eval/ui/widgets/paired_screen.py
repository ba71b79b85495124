"""`s`: the paired view. Each seed both paths finished, path A's return against path B's: on the diagonal when
they agree, off it by how much and where. It grows as episodes arrive; ←/→ walk the seeds (invalid first, then
the largest differences), `enter` opens the seed's episodes on both paths (as `enter` in the log does), `c` a
clip of it (its frames)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult, RenderResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from tui_eval.records import EpisodeRecord
from tui_eval.views.format import num, seed_text
from tui_eval.views.paired import PairedPoint, PairedSeeds

from ..paired_plot import STYLE_DIFFERS, STYLE_INVALID, STYLE_SAME, by_interest, scatter_lines

Open = Callable[[int, int], None]  # (seed, block): record that seed's clip


class PairedPlot(Widget):
    DEFAULT_CSS = "PairedPlot { height: 1fr; }"

    def __init__(self, screen: PairedScreen, **kwargs):
        super().__init__(**kwargs)
        self.owner = screen

    def render(self) -> RenderResult:
        owner = self.owner
        lines = scatter_lines(owner.seeds.points, self.size.width, self.size.height, owner.seeds.a, owner.seeds.b,
                              owner.selected)
        return Text("\n").join(lines)


class PairedScreen(Screen[tuple[int, int] | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,s", "dismiss", "back"),
        Binding("right,down,j", "walk(1)", "next seed"),
        Binding("left,up,k", "walk(-1)", "previous"),
        Binding("home", "walk_home", "largest Δ", show=False),
        Binding("enter", "open", "episodes"),
        Binding("c", "clip", "clip"),
    ]

    def __init__(self, paths: list[str], records: list[EpisodeRecord], on_clip: Open):
        super().__init__()
        self.seeds = PairedSeeds(paths[0], paths[1])
        self.seeds.add(records)
        self.on_clip = on_clip
        self.selected: PairedPoint | None = None
        self._order: list[PairedPoint] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="paired-title")
        yield PairedPlot(self, id="paired-plot")
        yield Static(id="paired-seed")
        yield Footer()

    def on_mount(self) -> None:
        self.action_walk_home()

    def add(self, records: list[EpisodeRecord]) -> None:
        """Records that arrived: the plot grows (the selected seed stays selected)."""
        if self.seeds.add(records) and self.is_mounted:
            self._order = None
            self.show()

    def order(self) -> list[PairedPoint]:
        if self._order is None:
            self._order = by_interest(self.seeds.points)
        return self._order

    def action_walk(self, step: int) -> None:
        order = self.order()
        if not order:
            return
        at = order.index(self.selected) if self.selected in order else -step
        self.selected = order[(at + step) % len(order)]
        self.show()

    def action_walk_home(self) -> None:
        order = self.order()
        self.selected = order[0] if order else None
        self.show()

    def action_open(self) -> None:
        """Back to the run, which opens the seed once this screen is gone (the push's callback)."""
        if self.selected is not None:
            self.dismiss((self.selected.seed, self.selected.block))

    def action_clip(self) -> None:
        if self.selected is not None:
            self.on_clip(self.selected.seed, self.selected.block)

    def show(self) -> None:
        points = self.seeds.points
        same = sum(p.identical for p in points)
        invalid = sum(not p.valid for p in points)
        title = Text(f" y {self.seeds.b} · x {self.seeds.a} · {len(points)} seeds: ", style="bold")
        title.append(f"{same} identical", style=STYLE_SAME)
        title.append(", ")
        title.append(f"{len(points) - same - invalid} differ", style=STYLE_DIFFERS)
        title.append(", ")
        title.append(f"{invalid} invalid ×", style=STYLE_INVALID)
        self.query_one("#paired-title", Static).update(title)
        self.query_one("#paired-seed", Static).update(self.seed_line())
        self.query_one(PairedPlot).refresh()

    def seed_line(self) -> Text:
        p = self.selected
        if p is None:
            return Text(" no seed both paths finished yet", style="italic")
        a, b = self.seeds.a, self.seeds.b
        text = Text(f" ◉ {seed_text(p.block, p.seed)}: {a} {_result(p.a, p.valid_a)} · {b} {_result(p.b, p.valid_b)}")
        if p.valid:
            text.append(f" · Δ {num(p.a - p.b, 3)}")
        text.append(" · identical" if p.identical else " · differ",
                    style=STYLE_SAME if p.identical else STYLE_DIFFERS)
        return text


def _result(ret: float, valid: bool) -> str:
    return num(ret, 3) if valid else "invalid"
