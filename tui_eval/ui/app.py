"""The live monitor: a Textual view over engine events (`run_app`) or over a run log (`run_viewer`).

Shape (after bloomberg/memray's live view): the engine's worker threads only append to a bounded,
thread-safe `Inbox`; a `set_interval` timer drains it (4 Hz) and updates the widgets inside one
`batch_update()`. Statistics are the engine's own running ones, summarised once a second; the episode
log and the sparklines are ring buffers, so memory stays flat however long the run. Nothing slow runs
on the event loop: loading the policies, exports and log look-ups run in daemon threads that post
messages back (daemon threads, not Textual thread workers: those run on asyncio's default executor,
which the app's exit would wait for while a checkpoint loads).
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer

from tui_eval.events import BlockStarted, Event, PathFailed, PathFinished, PathNotice, StateChanged
from tui_eval.format import workers_line
from tui_eval.spec import BadInput
from tui_eval.stats import ComparisonSummary

from . import messages as msg
from .actions import RunActions
from .frame_actions import FrameActions
from .frame_renderers import FrameOptions
from .inbox import Inbox
from .source import FACT_KEYS, LiveSource, LogSource
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
from .widgets.run_header import HeaderInfo

EXIT_OK, EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 2, 130, 143
# Measured on 2 cores (bench/bench_ui.py): every frame holds the GIL the evaluation threads need, so
# the stream (log, sparklines: a small band of the screen) redraws at 4 Hz and the statistics (table,
# verdict, histograms, header counts: the whole screen) once a second; a key press redraws at once.
REFRESH_HZ = 4.0
STATS_INTERVAL = 1.0
LOG_ROWS = 500


class Panel(Vertical, can_focus=True):
    """A titled section; `tab` moves between them."""

    DEFAULT_CSS = """
    Panel { height: auto; }
    """


class EvalApp(FrameActions, RunActions, App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "tui-eval"
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS = [
        Binding("space,p", "toggle_pause", "pause"),
        Binding("r", "resample", "resample"),
        Binding("b", "toggle_view", "blocks"),
        Binding("x", "explore", "explore"),
        Binding("e", "export", "export"),
        Binding("v", "frames", "frames", show=False),
        Binding("c", "clip", "clip", show=False),
        Binding("d", "diagnose", "diagnose", show=False),  # in the help (?): the footer keeps q at 80 columns
        Binding("f", "filter_path", "filter path", show=False),
        Binding("i", "filter_invalid", "invalid only", show=False),
        Binding("h", "toggle_histograms", "histograms", show=False),
        Binding("escape", "close_detail", "close", show=False),
        Binding("question_mark,f1", "help", "help"),
        Binding("q", "quit_run", "quit"),
        Binding("ctrl+c", "interrupt", "interrupt", show=False, priority=True),
    ]

    def __init__(self, plan=None, *, log_path: str | Path | None = None, control=None, refresh_hz: float = REFRESH_HZ,
                 stats_interval: float = STATS_INTERVAL, on_engine: Callable | None = None,
                 on_hangup: Callable[[], None] | None = None, on_terminate: Callable[[], None] | None = None,
                 frames: FrameOptions | None = None):
        super().__init__()
        self.frame_options = frames or FrameOptions()
        self._on_engine = on_engine  # called with the engine once loaded (the run's owner serves it)
        self._on_hangup = on_hangup  # the terminal is gone: leave the screen, the run goes on
        self._on_terminate = on_terminate  # SIGTERM: stop the run
        if (plan is None) == (log_path is None):
            raise ValueError("EvalApp needs a plan (live run) or a log_path (viewer), not both")
        self.plan = plan
        self.refresh_hz = refresh_hz
        self.stats_interval = stats_interval
        self.inbox = Inbox(keep=LOG_ROWS + 100)
        self.source: LiveSource | LogSource | None = None
        self.engine = None
        self.load_error: str | None = None
        self.load_exit_code = EXIT_OK
        self.loaded: dict[str, float] = {}
        self.view_block = False
        self.summaries: dict = {}
        self.comparison: ComparisonSummary | None = None
        self._t0 = time.monotonic()
        self._last_stats = 0.0
        self._stats_dirty = True
        self._exporting = False
        self._quitting = False
        if plan is not None:
            self.paths = list(plan.paths)
            self.facts = {"checkpoint": str(plan.kind.checkpoint), "kind": plan.kind.name,
                          **{k: v for k, v in plan.facts.items() if k in FACT_KEYS}}
            self.device = plan.spec.device
            self.target = plan.spec.episodes
            self.log_path = Path(plan.log_path)
        else:
            self.source = LogSource(log_path, self.inbox, control=control)
            self.paths = list(self.source.paths)
            self.facts = self.source.facts
            self.device = self.source.device
            self.target = self.source.target
            self.log_path = Path(log_path)

    @property
    def readonly(self) -> bool:
        """A view of a run log without controls (a finished run, or one not started by this user)."""
        return self.plan is None and (self.source is None or self.source.readonly)

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield RunHeader(self._header_info(), id="header")
        with Vertical(id="body"):
            with Panel(id="compare", classes="panel"):
                yield ComparisonTable(TableData(paths=self.paths, target=self.target), id="table")
                yield VerdictBar(id="verdict")
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
        self._set_log_title()
        self.query_one(EpisodeLog).focus()
        self.set_interval(1.0 / self.refresh_hz, self._tick, name="refresh")
        status = self.query_one(StatusLine)
        self._handle_signals()
        if self.plan is not None:
            status.say(f"loading {self.facts['checkpoint']} ({', '.join(self.paths)})…")
            threading.Thread(target=self._load, name="tui-eval-load", daemon=True).start()
        elif self.readonly:
            status.say(f"read-only view of {self.log_path}: pause, resample and explore are disabled",
                       style="italic", sticky=True)
            self.source.start()
        else:
            status.say(f"attached to the live run {self.log_path.stem}: its controls work here; q leaves this "
                       f"view and the run goes on (tui-eval stop {self.log_path.stem} ends it)", sticky=True)
            self.source.start()
        self._tick()
        if self.frame_options.show:
            self.open_frames()

    def _handle_signals(self) -> None:
        loop = asyncio.get_running_loop()
        if self._on_hangup is not None:
            loop.add_signal_handler(signal.SIGHUP, self._hang_up)
        if self._on_terminate is not None:
            loop.add_signal_handler(signal.SIGTERM, self._terminate)

    def _hang_up(self) -> None:
        """The terminal is gone: leave without stopping the run (its owner carries it on, detached)."""
        assert self._on_hangup is not None
        self._on_hangup()
        self._quitting = True
        self.exit(EXIT_OK, return_code=EXIT_OK)

    def _terminate(self) -> None:
        assert self._on_terminate is not None
        self._on_terminate()
        self._leave(EXIT_TERMINATED)

    # ------------------------------------------------------------------ loading (a daemon thread)
    def _load(self) -> None:
        from tui_eval.session import start_engine

        try:
            engine = start_engine(self.plan, on_loaded=lambda name, s: self.post_message(msg.PathLoaded(name, s)))
        except BadInput as exc:
            self.post_message(msg.LoadFailed(str(exc), EXIT_BAD_INPUT))
            return
        except Exception as exc:  # a bug, not the user's input: still no traceback over the screen
            self.post_message(msg.LoadFailed(f"{type(exc).__name__}: {exc}", 1))
            return
        if self._on_engine is not None:
            self._on_engine(engine)
        if self._quitting or not self.post_message(msg.EngineReady(engine)):
            engine.close()  # the user quit while it loaded
            engine.log.set_meta(status="stopped", finished_at=time.time())

    def on_path_loaded(self, message: msg.PathLoaded) -> None:
        self.loaded[message.name] = message.seconds
        self.query_one(StatusLine).say(f"loaded {message.name} in {message.seconds:.1f}s")

    def on_engine_ready(self, message: msg.EngineReady) -> None:
        if self._quitting:
            message.engine.close()
            return
        self.engine = message.engine
        self.engine.frames.fps = self.frame_options.fps
        self.source = LiveSource(self.engine, self.inbox, self.facts, self.device)
        self.source.start()
        self.query_one(StatusLine).say(
            f"running {', '.join(self.paths)} on seeds {self.engine.blocks[0]} · log {self.log_path}")
        self._stats_dirty = True
        self._tick()

    def on_load_failed(self, message: msg.LoadFailed) -> None:
        self.load_error = message.message
        self.load_exit_code = message.exit_code
        self.query_one(StatusLine).say(f"could not start: {message.message} — press q to quit", style="bold red",
                                       sticky=True)
        verdict = Text(" CANNOT RUN ", style="bold white on red")
        verdict.append(f"  {message.message}\n", style="bold")
        verdict.append("press q to quit", style="italic")
        self.query_one(VerdictBar).show_message(verdict)
        self.notify(message.message, title="could not load the checkpoint", severity="error", timeout=30)
        self._show_header()

    # ------------------------------------------------------------------ refresh (timer, REFRESH_HZ)
    def _tick(self) -> None:
        src = self.source
        if src is None:
            self._show_header()
            return
        batch = self.inbox.drain()
        now = time.monotonic()
        with self.batch_update():
            for event in batch.events:
                self._on_engine_event(event)
            if batch.episodes:
                records = [rec for _, rec in batch.episodes]
                self.query_one(EpisodeLog).add(records)
                self.query_one(Sparklines).add(records, redraw=False)  # redrawn with the statistics
                self._stats_dirty = True
                detail = self.query_one(SeedDetail)
                if detail.records is not None and self.query_one("#detail-panel").has_class("-open"):
                    same = [r for r in records if r.seed == detail.seed and r.block == detail.block]
                    if same:  # the other path finished the selected seed: show it
                        detail.show(self.paths, detail.seed, detail.block, detail.records + same)
            if now - self._last_stats >= self.stats_interval:
                if self._stats_dirty:
                    self._refresh_stats()
                self._last_stats = now
                self._show_header()
                self.query_one(StatusLine).age()
            elif batch.events:
                self._show_header()

    def _set_title(self, selector: str, title: str) -> None:
        """Border titles repaint their panel: set them only when they change."""
        widget = self.query_one(selector)
        if widget.border_title != title:
            widget.border_title = title

    def _refresh_stats(self) -> None:
        src = self.source
        self._stats_dirty = False
        self.summaries, self.comparison = src.summaries(self.view_block)
        data = TableData(paths=self.paths, summaries=self.summaries,
                         explore={n: src.explore(n) for n in self.paths},
                         throughput={n: src.throughput(n) for n in self.paths},
                         target=self.target, comparison=self.comparison)
        self.query_one(ComparisonTable).show(data)
        self.query_one(Sparklines).refresh()
        if self.load_error is None:
            self.query_one(VerdictBar).show(self.comparison, self.paths[0] if len(self.paths) == 1 else None)
        hist = self.query_one(Histograms)
        if hist.display:
            hist.show(src.returns(self.view_block))
        blocks = src.blocks
        title = "comparison · all blocks" if not self.view_block else (
            f"comparison · block {len(blocks) - 1} only (seeds {blocks[-1]})")
        if len(blocks) > 1 and not self.view_block:
            title += f" ({len(blocks)}) · b: this block only"
        self._set_title("#compare", title)
        self._set_title("#charts", self.query_one(Sparklines).caption())

    def _header_info(self) -> HeaderInfo:
        src = self.source
        state, note = "loading", ""
        if self.load_error is not None:
            state, note = "failed", "press q to quit"
        elif src is None:
            waiting = [n for n in self.paths if n not in self.loaded]
            note = f"loading {waiting[0]}…" if waiting else "starting…"
        else:
            state = src.state
            if state == "stale":
                note = f"no new record for {int(src.idle_seconds())}s: the run may have died"
        if self._quitting and state not in ("done", "failed"):
            state = "stopping"
        block = ""
        done: dict[str, int] = {}
        elapsed = time.monotonic() - self._t0
        if src is not None:
            blocks = src.blocks
            block = f"{blocks[-1]} (block {len(blocks) - 1})" if len(blocks) > 1 else str(blocks[-1])
            done = {name: s.episodes for name, s in src.stats.paths.items()}
            elapsed = src.elapsed()
            if self.view_block:
                note = (note + " " if note else "") + "[block view]"
        elif self.plan is not None:
            block = str(self.plan.seeds)
        return HeaderInfo(checkpoint=self.facts.get("checkpoint", ""), kind=self.facts.get("kind", ""),
                          facts=self.facts, device=self.device, state=state, note=note, elapsed=elapsed,
                          block=block, paths=self.paths, done=done, target=self.target, readonly=self.readonly,
                          workers=workers_line(self.engine.paths) if self.engine is not None else "")

    def _show_header(self) -> None:
        self.query_one(RunHeader).show(self._header_info())

    def _set_log_title(self) -> None:
        log = self.query_one(EpisodeLog)
        title = f"episodes · newest first · {log.filter.describe()} · the last {log.cap} kept · enter: both paths"
        if log.waiting:
            title = f"episodes · {log.waiting} new above: home shows them · {log.filter.describe()} · enter: both paths"
        self._set_title("#log-panel", title)

    def on_episode_log_waiting(self, message: EpisodeLog.Waiting) -> None:
        self._set_log_title()

    def _on_engine_event(self, event: Event) -> None:
        status = self.query_one(StatusLine)
        if isinstance(event, StateChanged):
            if self.readonly or (self.plan is None and event.state not in ("paused", "running")):
                if event.state in ("done", "stale", "stopped", "interrupted", "failed"):
                    status.say(f"the run log says: {event.state}" if event.state != "stale" else
                               "no new record for a while: the run may have died (its log says running)")
                self._stats_dirty = True
                return
            if event.state == "paused":
                status.say("paused: no new episodes start; episodes in flight finish and are recorded",
                           style="yellow")
            elif event.state == "running":
                status.say("running")
            elif event.state == "done":
                status.say("done: every path finished; press q to quit and print the summary", style="bold")
            elif event.state == "stopping":
                status.say("stopping: episodes in flight are dropped, finished ones are in the log")
            self._stats_dirty = True
        elif isinstance(event, BlockStarted):
            status.say(f"seed block {event.index}: {event.block} ({event.reason})", style="bold")
            self._stats_dirty = True
        elif isinstance(event, PathFailed):
            what = "gave up on it" if event.gave_up else f"restarted ({event.restarts})"
            text = f"path {event.path} failed: {event.message} — {what}"
            status.say(text, style="bold red", sticky=True)
            self.notify(event.message, title=f"path {event.path} failed ({what})", severity="error",
                        timeout=10)
        elif isinstance(event, PathNotice):
            status.say(f"path {event.path}: {event.message}", style="yellow", sticky=True)
        elif isinstance(event, PathFinished):
            status.say(f"{event.path} finished its episodes")

    def action_quit_run(self) -> None:
        self._leave(self.load_exit_code if self.load_error else EXIT_OK)

    def action_interrupt(self) -> None:
        self._leave(EXIT_INTERRUPTED)

    def _leave(self, code: int) -> None:
        self._quitting = True
        self.finished_before_quit = self.engine is not None and self.engine.state == "done"
        if self.source is not None:
            self.source.stop()  # the engine stops now; run_app waits for it after the screen is restored
        self.exit(code, return_code=code)

    def on_unmount(self) -> None:
        if isinstance(self.source, LogSource):
            self.source.close()
