"""The episode log, newest first: a Line-API widget over bounded ring buffers.

Only the visible lines are drawn, and new episodes are appended to deques (at most `cap` per view:
all paths, each path, invalid only), so a refresh costs the same at 10 or 10,000 episodes per second
and the app never holds more than a few thousand records. On the newest row the cursor follows the
stream; moved down to read an episode, the view holds still: new episodes are counted (`waiting`)
and shown when the cursor returns to the top, so the selected row never moves under the reader.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from tui_eval.records import EpisodeRecord
from tui_eval.views.format import num

from .palette import path_style

# (header, width, right-aligned); the last column takes what is left
COLUMNS = (("seed", 11, True), ("blk", 3, True), ("path", 11, False), ("return", 9, True), ("len", 6, True),
           ("success", 7, False), ("explore", 7, False), ("invalid", 0, False))


def _cell(text: str, width: int, right: bool) -> str:
    text = text[:width]
    return text.rjust(width) if right else text.ljust(width)


def row_cells(rec: EpisodeRecord) -> list[str]:
    ret = "—" if not math.isfinite(rec.ret) else num(rec.ret, 1)
    success = "—" if rec.success is None else ("yes" if rec.success else "no")
    explore = "—" if rec.explore is None else ("on" if rec.explore else "off")
    invalid = f"× {rec.reason or 'invalid'}" if rec.invalid else ""
    return [str(rec.seed), str(rec.block), rec.path, ret, str(rec.length), success, explore, invalid]


class LogHeader(Widget):
    DEFAULT_CSS = """
    LogHeader { height: 1; color: $text-muted; text-style: bold; text-wrap: nowrap; text-overflow: clip; }
    """

    def render(self) -> Text:
        return Text(" ".join(_cell(h, w or 20, right) for h, w, right in COLUMNS), no_wrap=True, overflow="crop")


@dataclass(frozen=True)
class Filter:
    path: str | None = None
    invalid_only: bool = False

    def describe(self) -> str:
        what = "invalid only" if self.invalid_only else "all"
        return f"{what}, {self.path}" if self.path else f"{what}, every path"


class EpisodeLog(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    EpisodeLog { height: 1fr; overflow-x: hidden; overflow-y: hidden; }
    EpisodeLog > .episode-log--cursor { background: $accent 40%; }
    EpisodeLog:focus > .episode-log--cursor { background: $accent; color: $text; text-style: bold; }
    EpisodeLog > .episode-log--invalid { color: $error; }
    """
    COMPONENT_CLASSES = {"episode-log--cursor", "episode-log--invalid"}
    BINDINGS = [
        Binding("up,k", "cursor(-1)", "up", show=False),
        Binding("down,j", "cursor(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "jump(0)", "newest", show=False),
        Binding("end", "jump(-1)", "oldest", show=False),
        Binding("enter", "select", "both paths of this seed", show=False),
    ]

    cursor = reactive(0, always_update=True, repaint=False)

    class SeedSelected(Message):
        def __init__(self, record: EpisodeRecord) -> None:
            super().__init__()
            self.record = record

    def __init__(self, paths: list[str], cap: int = 500, **kwargs):
        super().__init__(**kwargs)
        self.paths = list(paths)
        self.cap = cap
        self._all: collections.deque[EpisodeRecord] = collections.deque(maxlen=cap)
        self._invalid: collections.deque[EpisodeRecord] = collections.deque(maxlen=cap)
        self._by_path: dict[str, collections.deque[EpisodeRecord]] = {}
        self.filter = Filter()
        self.total = 0
        self._styles_memo: dict | None = None  # resolved Rich styles, reset when CSS state changes
        self._lines: dict[tuple[EpisodeRecord, int], list[Segment]] = {}  # (record, width) -> segments
        self._held: collections.deque[EpisodeRecord] = collections.deque(maxlen=cap)  # arrived while reading
        self.waiting = 0  # episodes that arrived while the cursor was away from the top

    class Waiting(Message):
        """The count of episodes held back while the reader is away from the top changed."""

        def __init__(self, count: int) -> None:
            super().__init__()
            self.count = count

    # ------------------------------------------------------------------ data
    def _deque_for(self, f: Filter) -> collections.deque:
        if f.invalid_only:
            return self._invalid
        if f.path is not None:
            return self._by_path.setdefault(f.path, collections.deque(maxlen=self.cap))
        return self._all

    @property
    def rows(self) -> collections.deque[EpisodeRecord]:
        """The current view's records, oldest first (row 0 on screen is the last one)."""
        rows = self._deque_for(self.filter)
        if self.filter.invalid_only and self.filter.path is not None:
            return collections.deque((r for r in rows if r.path == self.filter.path), maxlen=self.cap)
        return rows

    def add(self, records: list[EpisodeRecord]) -> None:
        """Records oldest first; held back (and counted) while the cursor is away from the top."""
        if not records:
            return
        if self.cursor > 0:
            self._held.extend(records)
            self.waiting += len(records)
            self.post_message(self.Waiting(self.waiting))
            return
        self._show(records)

    def _release_held(self) -> None:
        if self.waiting:
            held, self.waiting = list(self._held), 0
            self._held.clear()
            self._show(held)
            self.post_message(self.Waiting(0))

    def _show(self, records: list[EpisodeRecord]) -> None:
        before = len(self.rows)
        shown = 0
        for rec in records:
            self.total += 1
            self._all.append(rec)
            self._by_path.setdefault(rec.path, collections.deque(maxlen=self.cap)).append(rec)
            if rec.invalid:
                self._invalid.append(rec)
            if (not self.filter.invalid_only or rec.invalid) and (self.filter.path in (None, rec.path)):
                shown += 1
        if shown:
            self._rows_changed(shown, before)

    def _set_row_count(self, count: int) -> None:
        """Change the scrollable height without a layout pass (no scrollbar: the keys scroll, and a
        scrollbar redrawn at every new episode costs more than the rows it frames)."""
        size = Size(self.size.width, count)
        if size != self.virtual_size:
            self.set_reactive(EpisodeLog.virtual_size, size)

    def _rows_changed(self, added: int, before: int) -> None:
        self._set_row_count(len(self.rows))  # shown only with the cursor on the newest row: nothing moves
        if len(self._lines) > 4 * self.cap:
            self._lines.clear()
        self.refresh()

    def set_filter(self, f: Filter) -> None:
        self.set_reactive(EpisodeLog.cursor, 0)
        self._release_held()
        self.filter = f
        self.set_reactive(EpisodeLog.cursor, 0)
        self._set_row_count(len(self.rows))
        self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def selected(self) -> EpisodeRecord | None:
        rows = self.rows
        if not rows:
            return None
        index = len(rows) - 1 - min(self.cursor, len(rows) - 1)
        return rows[index]

    # ------------------------------------------------------------------ keys
    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()

    def _move_to(self, row: int) -> None:
        count = len(self.rows)
        if not count:
            return
        row = max(0, min(count - 1, row))
        self.cursor = row
        if row == 0:  # back at the top: what arrived meanwhile comes in, newest first
            self._release_held()
        height = max(1, self.scrollable_content_region.height)
        if row < self.scroll_y:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= self.scroll_y + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, where: int) -> None:
        self._move_to(0 if where == 0 else len(self.rows) - 1)

    def action_select(self) -> None:
        rec = self.selected()
        if rec is not None:
            self.post_message(self.SeedSelected(rec))

    # ------------------------------------------------------------------ drawing
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles_memo = None
        self._lines.clear()

    def on_focus(self) -> None:
        self._styles_memo = None
        self.refresh()

    def on_blur(self) -> None:
        self._styles_memo = None
        self.refresh()

    def _styles_for_lines(self) -> dict:
        memo = self._styles_memo
        if memo is None:
            base = self.rich_style
            memo = self._styles_memo = {
                "base": base,
                "cursor": self.get_component_rich_style("episode-log--cursor"),
                "invalid": base + self.get_component_rich_style("episode-log--invalid"),
                "dim": base + Style(dim=True),
                "paths": {name: base + Style.parse(path_style(self.paths, name)) for name in self.paths},
            }
        return memo

    def _segments(self, rec: EpisodeRecord, width: int, styles: dict) -> list[Segment]:
        key = (rec, width)
        segments = self._lines.get(key)
        if segments is None:
            base = styles["base"]
            rest = max(0, width - sum(w + 1 for _, w, _ in COLUMNS[:-1]))
            cells = row_cells(rec)
            segments = []
            text: list[str] = []
            for (header, w, right), cell in zip(COLUMNS, cells):
                piece = _cell(cell, w or rest, right) + " "
                if header == "path" or (header == "invalid" and cell):
                    if text:
                        segments.append(Segment("".join(text), base))
                        text = []
                    style = styles["paths"].get(rec.path, base) if header == "path" else styles["invalid"]
                    segments.append(Segment(piece, style))
                else:
                    text.append(piece)
            if text:
                segments.append(Segment("".join(text), base))
            segments = list(Strip(segments).crop(0, width).extend_cell_length(width, base))
            self._lines[key] = segments
        return segments

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        rows = self.rows
        row = int(self.scroll_y) + y
        styles = self._styles_for_lines()
        base = styles["base"]
        if row >= len(rows):
            if row == 0 and y == 0:
                msg = "no episodes yet" if not self.filter.invalid_only else "no invalid episodes"
                return Strip([Segment(msg, styles["dim"])]).extend_cell_length(width, base)
            return Strip.blank(width, base)
        rec = rows[len(rows) - 1 - row]
        segments = self._segments(rec, width, styles)
        if row == self.cursor:
            cursor = styles["cursor"]
            return Strip([Segment(t, (st or base) + cursor) for t, st, _ in segments], width)
        return Strip(segments, width)

    def on_resize(self) -> None:
        self._lines.clear()
        self._set_row_count(len(self.rows))
