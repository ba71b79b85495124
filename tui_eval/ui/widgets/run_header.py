"""Two lines at the top: what runs (checkpoint, kind, algorithm, env, module, device) and how it goes
(state, elapsed time, seed block, episodes per path, progress)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.widget import Widget

from ..charts import progress_bar
from .palette import STATE_STYLES, path_style


def clock(seconds: float) -> str:
    seconds = int(max(0.0, seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


@dataclass
class HeaderInfo:
    checkpoint: str = ""
    kind: str = ""
    facts: dict[str, str] = field(default_factory=dict)
    device: str = ""
    state: str = "loading"
    note: str = ""  # e.g. "loading evaluate…" or "read-only"
    elapsed: float = 0.0
    block: str = ""  # e.g. "1000000000:  block 0"
    paths: list[str] = field(default_factory=list)
    done: dict[str, int] = field(default_factory=dict)
    target: int | None = None
    readonly: bool = False
    workers: str = ""  # where the paths' Ray actors run (node and pid), when the run is spread over Ray


class RunHeader(Widget):
    DEFAULT_CSS = """
    RunHeader { height: 2; background: $panel; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, info: HeaderInfo, **kwargs):
        super().__init__(**kwargs)
        self.info = info
        self._last: tuple | None = None

    def show(self, info: HeaderInfo) -> None:
        """Redraw only when something visible changed (the clock ticks once a second)."""
        key = (info.state, info.note, int(info.elapsed), info.block, tuple(sorted(info.done.items())),
               info.target, info.device, info.readonly, info.workers)
        self.info = info
        self.styles.height = 3 if info.workers else 2
        if key != self._last:
            self._last = key
            self.refresh()

    def render(self) -> Text:
        i = self.info
        width = max(20, self.size.width)
        top = Text(no_wrap=True, overflow="ellipsis")
        top.append("tui-eval ", style="bold")
        if i.readonly:
            top.append(" READ-ONLY ", style="bold black on white")
            top.append(" ")
        top.append(i.checkpoint, style="bold")
        parts = [i.kind, i.facts.get("algorithm", ""), i.facts.get("env", ""),
                 f"module {i.facts['module']}" if i.facts.get("module") else "", i.device]
        top.append("  " + " · ".join(p for p in parts if p), style="dim")

        bottom = Text(no_wrap=True, overflow="ellipsis")
        state = i.state if i.state in STATE_STYLES else "failed"
        bottom.append(f" {i.state.upper()} ", style=STATE_STYLES[state])
        bottom.append(f" {clock(i.elapsed)}", style="bold")
        if i.note:
            bottom.append(f"  {i.note}", style="italic")
        total = 0
        for name in i.paths:
            done = i.done.get(name, 0)
            total += done
            bottom.append("  ")
            bottom.append(name, style=path_style(i.paths, name))
            bottom.append(f" {done:,}" + (f"/{i.target:,}" if i.target else ""))
        if i.target:
            goal = i.target * max(1, len(i.paths))
            seeds_room = len(i.block) + 8 if i.block else 0
            bar_width = min(20, width - bottom.cell_len - seeds_room - 7)
            bottom.append("  ")
            if bar_width >= 5:
                bottom.append(progress_bar(total, goal, bar_width), style="green on #3a3a3a")
                bottom.append(" ")
            bottom.append(f"{100 * total / goal:.0f}%")
        if i.block:
            bottom.append("  seeds ", style="dim")
            bottom.append(i.block)
        lines = [top, bottom]
        if i.workers:
            lines.append(Text(" ray  " + i.workers, style="dim", no_wrap=True, overflow="ellipsis"))
        return Text("\n", no_wrap=True, overflow="ellipsis").join(lines)
