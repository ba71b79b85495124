"""The run's screen, its view half: the layout, the view state (block view, histograms, the seed detail),
and a `RunSnapshot` (with the episodes and events that arrived) applied to the widgets. Its keys are in
`actions.RunScreen`. It reaches the app only through `RunHost`, and the run only through the host's source."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Protocol

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from tui_eval.engine.stall import EngineSilence
from tui_eval.engine.void import void_reason
from tui_eval.records import BlockStarted, Event, PathFailed, PathFinished, PathNotice, StateChanged
from tui_eval.views.format import decision_line
from tui_eval.views.snapshot import RunSnapshot, RunSource

from .frame_renderers import FrameOptions
from .inbox import Batch
from .widgets import (
    ComparisonTable,
    EpisodeLog,
    Histograms,
    LogHeader,
    RunHeader,
    SeedDetail,
    Sparklines,
    StatusLine,
    VerdictBar,
)
from .widgets.comparison_table import TableData
from .widgets.modules_panel import ModulesPanel
from .widgets.run_header import HeaderInfo
from .widgets.verdict import void_text

LOG_ROWS = 500


class RunHost(Protocol):
    """What the screen needs of the app (`EvalApp`)."""

    source: RunSource | None
    plan: Any  # the live run's Plan, or None (a viewer of a log)
    load_error: str | None
    load_exit_code: int
    loaded: dict[str, float]
    paths: list[str]
    facts: dict[str, str]
    device: str
    target: int | None
    log_path: Path
    frame_options: FrameOptions
    quitting: bool
    started: float  # time.monotonic() when the app started

    @property
    def readonly(self) -> bool: ...

    def begin(self) -> None: ...

    def tick(self) -> None: ...

    def leave(self, code: int) -> None: ...


class Panel(Vertical, can_focus=True):
    """A titled section; `tab` moves between them."""

    DEFAULT_CSS = """
    Panel { height: auto; }
    """


class RunView(Screen):
    def __init__(self, host: RunHost):
        super().__init__()
        self.host = host
        self.paths = list(host.paths)
        self.view_block = False  # statistics of the current block only (`b`)
        self.stats_dirty = True
        self.last_stats = 0.0
        self.snapshot: RunSnapshot | None = None  # the last one shown with its numbers
        self.failures: list[PathFailed] = []  # a path given up voids the comparison
        self.silence: EngineSilence | None = None  # live runs: paths with no episode for much longer than usual

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield RunHeader(self.header_info(None), id="header")
        with Vertical(id="body"):
            with Panel(id="compare", classes="panel"):
                yield ComparisonTable(TableData(paths=self.paths, target=self.host.target), id="table")
                yield VerdictBar(id="verdict")
                yield ModulesPanel(self.paths, id="modules")  # multi-agent runs only
            with Panel(id="charts", classes="panel"):
                # histograms first: they are what 80x24 drops, and the sparklines sit above the log
                yield Histograms(self.paths, id="histograms")
                yield Sparklines(self.paths, id="sparks")
            with Horizontal(id="log-area"):
                with Vertical(id="log-panel", classes="panel"):
                    yield LogHeader()
                    yield EpisodeLog(self.paths, cap=LOG_ROWS, id="log")
                with Vertical(id="detail-panel", classes="panel"):
                    yield SeedDetail(id="detail")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#compare").border_title = "comparison · all blocks"
        self.query_one("#charts").border_title = "returns per episode"
        self.query_one("#detail-panel").border_title = "seed · both paths"
        self.set_log_title()
        self.query_one(EpisodeLog).focus()
        self.host.begin()

    def on_resize(self, event: events.Resize) -> None:
        """A taller screen may show the histograms (hidden below 32 lines): a snapshot that was taken without
        returns would otherwise stay until the next episode, which a finished run never sends."""
        self.stats_dirty = True

    def say(self, text: str, **style: Any) -> None:
        self.query_one(StatusLine).say(text, **style)

    # ------------------------------------------------------------------ applying what arrived
    @property
    def wants_returns(self) -> bool:
        return bool(self.query_one(Histograms).display)

    def take(self, batch: Batch) -> None:
        """The episodes and events that arrived since the last tick."""
        for event in batch.events:
            self.on_run_event(event)
            if self.silence is not None:
                self.silence.on_event(event)
        if not batch.episodes:
            return
        records = [rec for _, rec in batch.episodes]
        if self.silence is not None:
            for rec in records:
                self.silence.record(rec)
        self.query_one(EpisodeLog).add(records)
        self.query_one(Sparklines).add(records, redraw=False)  # redrawn with the statistics
        self.query_one(ModulesPanel).add(records)
        self.stats_dirty = True
        detail = self.query_one(SeedDetail)
        seed, block = detail.seed, detail.block
        if detail.records is not None and seed is not None and block is not None \
                and self.query_one("#detail-panel").has_class("-open"):
            shown = {r.path for r in detail.records}  # a viewer still reading the log streams them again
            same = [r for r in records if r.seed == seed and r.block == block and r.path not in shown]
            if same:  # the other path finished the selected seed: show it
                detail.show(self.paths, seed, block, detail.records + same)

    def show(self, snapshot: RunSnapshot) -> None:
        """A snapshot with its numbers: the table, verdict, histograms and titles."""
        self.stats_dirty = False
        self.snapshot = snapshot
        self.query_one(ComparisonTable).show(TableData.of(snapshot, self.host.target))
        self.query_one(Sparklines).refresh()
        void = void_reason(self.failures)
        if void is not None and self.host.load_error is None:
            self.query_one(VerdictBar).show_message(void_text(void))
        elif self.host.load_error is None:
            self.query_one(VerdictBar).show(snapshot.comparison, self.paths[0] if len(self.paths) == 1 else None)
        modules, source = self.query_one(ModulesPanel), self.host.source
        if modules.records and source is not None:
            modules.show(source.meta(), void)
        hist = self.query_one(Histograms)
        if hist.display and snapshot.returns is not None:
            hist.show(dict(snapshot.returns))
        blocks = snapshot.blocks
        title = "comparison · all blocks" if not snapshot.block_only else (
            f"comparison · block {len(blocks) - 1} only (seeds {blocks[-1]})")
        if len(blocks) > 1 and not snapshot.block_only:
            title += f" ({len(blocks)}) · b: this block only"
        self.set_title("#compare", title)
        self.set_title("#charts", self.query_one(Sparklines).caption())

    def set_title(self, selector: str, title: str) -> None:
        """Border titles repaint their panel: set them only when they change."""
        widget = self.query_one(selector)
        if widget.border_title != title:
            widget.border_title = title

    # ------------------------------------------------------------------ the header
    def header_info(self, snapshot: RunSnapshot | None) -> HeaderInfo:
        host = self.host
        state, note = "loading", ""
        if host.load_error is not None:
            state, note = "failed", "press q to quit"
        elif snapshot is None:
            waiting = [n for n in self.paths if n not in host.loaded]
            note = f"loading {waiting[0]}…" if waiting else "starting…"
        else:
            state = snapshot.state
            if state == "stale":
                note = f"no new record for {int(snapshot.idle_seconds)}s: the run may have died"
        if host.quitting and state not in ("done", "failed"):
            state = "stopping"
        block, done, elapsed = "", {}, time.monotonic() - host.started
        if snapshot is not None:
            blocks = snapshot.blocks
            block = f"{blocks[-1]} (block {len(blocks) - 1})" if len(blocks) > 1 else str(blocks[-1])
            done, elapsed = dict(snapshot.done), snapshot.elapsed
            if self.view_block:
                note = (note + " " if note else "") + "[block view]"
        elif host.plan is not None:
            block = str(host.plan.seeds)
        return HeaderInfo(checkpoint=host.facts.get("checkpoint", ""), kind=host.facts.get("kind", ""),
                          facts=host.facts, device=host.device, state=state, note=note, elapsed=elapsed,
                          block=block, paths=self.paths, done=done, target=host.target, readonly=host.readonly,
                          workers=snapshot.workers if snapshot is not None else "")

    def say_silent_paths(self) -> None:
        """Paths with no episode for much longer than their episodes take, on the status line."""
        quiet = self.silence.lines() if self.silence is not None else []
        if quiet:
            self.say("; ".join(quiet), style="bold yellow")

    def show_header(self) -> None:
        source = self.host.source
        self.query_one(RunHeader).show(self.header_info(None if source is None else source.snapshot(numbers=False)))

    def set_log_title(self) -> None:
        log = self.query_one(EpisodeLog)
        title = f"episodes · newest first · {log.filter.describe()} · the last {log.cap} kept · enter: both paths"
        if log.waiting:
            title = f"episodes · {log.waiting} new above: home shows them · {log.filter.describe()} · enter: both paths"
        self.set_title("#log-panel", title)

    def on_episode_log_waiting(self, message: EpisodeLog.Waiting) -> None:
        self.set_log_title()

    # ------------------------------------------------------------------ the run's events, in words
    def show_load_failure(self, message: str) -> None:
        self.say(f"could not start: {message} — press q to quit", style="bold red", sticky=True)
        verdict = Text(" CANNOT RUN ", style="bold white on red")
        verdict.append(f"  {message}\n", style="bold")
        verdict.append("press q to quit", style="italic")
        self.query_one(VerdictBar).show_message(verdict)
        self.app.notify(message, title="could not load the checkpoint", severity="error", timeout=30)
        self.show_header()

    def on_run_event(self, event: Event) -> None:
        if isinstance(event, StateChanged):
            self.stats_dirty = True
            self._say_state(event.state)
        elif isinstance(event, BlockStarted):
            self.say(f"seed block {event.index}: {event.block} ({event.reason})", style="bold")
            self.stats_dirty = True
        elif isinstance(event, PathFailed):
            what = "gave up on it" if event.gave_up else f"restarted ({event.restarts})"
            self.failures.append(event)
            self.stats_dirty = True
            self.say(f"path {event.path} failed: {event.message} — {what}", style="bold red", sticky=True)
            self.app.notify(event.message, title=f"path {event.path} failed ({what})", severity="error",
                            timeout=10)
        elif isinstance(event, PathNotice):
            self.say(f"path {event.path}: {event.message}", style="yellow", sticky=True)
        elif isinstance(event, PathFinished):
            self.say(f"{event.path} finished its episodes")

    def _say_state(self, state: str) -> None:
        if self.host.readonly or (self.host.plan is None and state not in ("paused", "running")):
            if state in ("done", "stale", "stopped", "interrupted", "failed"):
                self.say(f"the run log says: {state}" if state != "stale" else
                         "no new record for a while: the run may have died (its log says running)")
            return
        if state == "paused":
            self.say("paused: no new episodes start; episodes in flight finish and are recorded", style="yellow")
        elif state == "running":
            self.say("running")
        elif state == "done":
            source = self.host.source
            decided = decision_line({"decision": source.meta().get("decision")}) if source is not None else None
            ended = f"done: {decided}" if decided else "done: every path finished"  # --until-decided / the gate
            self.say(f"{ended}; press q to quit and print the summary", style="bold")
        elif state == "stopping":
            self.say("stopping: episodes in flight are dropped, finished ones are in the log")
