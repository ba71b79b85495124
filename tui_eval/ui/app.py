"""The live monitor: a Textual view over engine events (`run_app`) or over a run log (`run_viewer`).

Shape (after bloomberg/memray's live view): the app holds a `RunSource` (the live engine, or a run log
read back) and talks to nothing else; the source's threads only append to a bounded, thread-safe `Inbox`;
a `set_interval` timer drains it (4 Hz), takes a frozen `RunSnapshot` from the source, and applies both
to the run's screen (`actions.RunScreen`: the view state and the key actions) inside one `batch_update()`.
Statistics are the engine's own running ones, summarised once a second; the episode log and the
sparklines are ring buffers, so memory stays flat however long the run. Nothing slow runs
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

from textual.app import App
from textual.binding import Binding

from tui_eval.engine.stall import EngineSilence
from tui_eval.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, BadInput
from tui_eval.log.lifecycle import EngineState, RunMeta, RunStatus
from tui_eval.stats import ComparisonSummary
from tui_eval.views.snapshot import RunSource

from . import messages as msg
from .frame_renderers import FrameOptions
from .inbox import Inbox
from .key_actions import RunScreen
from .run_view import LOG_ROWS
from .source import FACT_KEYS, LiveSource, LogSource
from .widgets import StatusLine
from .widgets.episode_log import EpisodeLog

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TERMINATED", "EvalApp"]

# Measured on 2 cores (bench/bench_ui.py): every frame holds the GIL the evaluation threads need, so
# the stream (log, sparklines: a small band of the screen) redraws at 4 Hz and the statistics (table,
# verdict, histograms, header counts: the whole screen) once a second; a key press redraws at once.
REFRESH_HZ = 4.0
STATS_INTERVAL = 1.0


def _key(action: str) -> str:
    """A key bound by the app to the run screen's action (so that it works over the frame screen too)."""
    return f"screen_key('{action}')"


class EvalApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "tui-eval"
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    finished_before_quit: bool  # set when the user leaves: were the paths done by then?
    BINDINGS = [
        Binding("space,p", _key("toggle_pause"), "pause"),
        Binding("r", _key("resample"), "resample"),
        Binding("b", _key("toggle_view"), "blocks", show=False),  # in the help (?): q stays in the footer at 80
        Binding("x", _key("explore"), "explore"),
        Binding("e", _key("export"), "export"),
        Binding("s", _key("paired"), "paired"),
        Binding("v", _key("frames"), "frames", show=False),
        Binding("c", _key("clip"), "clip", show=False),
        Binding("d", _key("diagnose"), "diagnose", show=False),  # in the help (?): the footer keeps q at 80 columns
        Binding("f", _key("filter_path"), "filter path", show=False),
        Binding("i", _key("filter_invalid"), "invalid only", show=False),
        Binding("h", _key("toggle_histograms"), "histograms", show=False),
        Binding("t", _key("terms"), "terms", show=False),
        Binding("n", _key("contract"), "contract", show=False),
        Binding("escape", _key("close_detail"), "close", show=False),
        Binding("question_mark,f1", _key("help"), "help"),
        Binding("q", "quit_run", "quit"),
        Binding("ctrl+c", "interrupt", "interrupt", show=False, priority=True),
    ]

    def __init__(self, plan=None, *, log_path: str | Path | None = None,
                 make_source: Callable[[Inbox], RunSource] | None = None, control=None, refresh_hz: float = REFRESH_HZ,
                 stats_interval: float = STATS_INTERVAL, on_engine: Callable | None = None,
                 on_hangup: Callable[[], None] | None = None, on_terminate: Callable[[], None] | None = None,
                 frames: FrameOptions | None = None):
        super().__init__()
        self.frame_options = frames or FrameOptions()
        self._on_engine = on_engine  # called with the engine once loaded (the run's owner serves it)
        self._on_hangup = on_hangup  # the terminal is gone: leave the screen, the run goes on
        self._on_terminate = on_terminate  # SIGTERM: stop the run
        # make_source(inbox): any other RunSource (a scripted one in the tests), posting to the app's inbox
        if sum(given is not None for given in (plan, log_path, make_source)) != 1:
            raise ValueError("EvalApp needs one of a plan (live run), a log_path (viewer) or make_source")
        self.plan = plan
        self.refresh_hz = refresh_hz
        self.stats_interval = stats_interval
        self.inbox = Inbox(keep=LOG_ROWS + 100)
        self.source: RunSource | None = None
        self.load_error: str | None = None
        self.load_exit_code = EXIT_OK
        self.loaded: dict[str, float] = {}
        self.started = time.monotonic()
        self.quitting = False
        if plan is not None:
            self.paths = list(plan.paths)
            self.facts = {"checkpoint": str(plan.kind.checkpoint), "kind": plan.kind.name,
                          **{k: v for k, v in plan.facts.items() if k in FACT_KEYS}}
            self.device = plan.spec.device
            self.target = plan.spec.episodes
            self.log_path = Path(plan.log_path)
        else:
            if make_source is None:
                assert log_path is not None
                source: RunSource = LogSource(log_path, self.inbox, control=control)
            else:
                source = make_source(self.inbox)
            self.source = source
            self.paths, self.facts, self.device, self.target = list(source.paths), source.facts, source.device, \
                source.target
            self.log_path = Path(source.log_path)
        self.run_screen = RunScreen(self)

    @property
    def readonly(self) -> bool:
        """A view of a run log without controls (a finished run, or one not started by this user)."""
        return self.plan is None and (self.source is None or self.source.readonly)

    @property
    def engine(self):
        """The live run's engine, for the process around the app (it ends the run); the app itself
        talks to its source only."""
        return self.source.engine if isinstance(self.source, LiveSource) else None

    @property
    def summaries(self) -> dict:
        """The per-path summaries on screen."""
        shown = self.run_screen.snapshot
        return {} if shown is None else dict(shown.summaries)

    @property
    def comparison(self) -> ComparisonSummary | None:
        """The comparison on screen."""
        shown = self.run_screen.snapshot
        return None if shown is None else shown.comparison

    # ------------------------------------------------------------------ keys: the run screen's actions
    def action_screen_key(self, action: str) -> None:
        getattr(self.run_screen, f"action_{action}")()

    def check_action(self, action: str, parameters) -> bool | None:
        """The run screen says which of its actions are enabled (the read-only view dims the controls)."""
        if action == "screen_key" and parameters:
            action = parameters[0]
        return self.run_screen.check_action(action, parameters)

    # ------------------------------------------------------------------ layout
    def get_default_screen(self) -> RunScreen:
        return self.run_screen

    def begin(self) -> None:
        """The run screen is mounted: load the checkpoint (or follow the log), refresh on a timer."""
        screen = self.run_screen
        self.set_interval(1.0 / self.refresh_hz, self.tick, name="refresh")
        self._handle_signals()
        if self.plan is not None:
            screen.say(f"loading {self.facts['checkpoint']} ({', '.join(self.paths)})…")
            threading.Thread(target=self._load, name="tui-eval-load", daemon=True).start()
        elif self.readonly:
            screen.say(f"read-only view of {self.log_path}: pause, resample and explore are disabled",
                       style="italic", sticky=True)
            self._start_source()
        else:
            screen.say(f"attached to the live run {self.log_path.stem}: its controls work here; q leaves this "
                       f"view and the run goes on (tui-eval stop {self.log_path.stem} ends it)", sticky=True)
            self._start_source()
        self.tick()
        if self.frame_options.show:
            screen.open_frames()

    def _start_source(self) -> None:
        assert self.source is not None
        self.source.start()

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
        self.quitting = True
        self.exit(EXIT_OK, return_code=EXIT_OK)

    def _terminate(self) -> None:
        assert self._on_terminate is not None
        self._on_terminate()
        self.leave(EXIT_TERMINATED)

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
        if self.quitting or not self.post_message(msg.EngineReady(engine)):
            engine.close()  # the user quit while it loaded
            RunMeta(status=RunStatus.STOPPED, finished_at=time.time()).write(engine.log)

    def on_path_loaded(self, message: msg.PathLoaded) -> None:
        self.loaded[message.name] = message.seconds
        self.run_screen.say(f"loaded {message.name} in {message.seconds:.1f}s")

    def on_engine_ready(self, message: msg.EngineReady) -> None:
        if self.quitting:
            message.engine.close()
            return
        engine = message.engine
        engine.frames.fps = self.frame_options.fps
        source = LiveSource(engine, self.inbox, self.facts, self.device)
        self.source = source
        self.run_screen.silence = EngineSilence(engine)
        source.start()
        self.run_screen.say(f"running {', '.join(self.paths)} on seeds {source.blocks[0]} · log {self.log_path}")
        self.run_screen.stats_dirty = True
        self.tick()

    def on_load_failed(self, message: msg.LoadFailed) -> None:
        self.load_error = message.message
        self.load_exit_code = message.exit_code
        self.run_screen.show_load_failure(message.message)

    # ------------------------------------------------------------------ refresh (timer, REFRESH_HZ)
    def tick(self) -> None:
        """What arrived, and (once per `stats_interval`, when something changed) a snapshot, onto the screen."""
        screen, source = self.run_screen, self.source
        if source is None:
            screen.show_header()
            return
        if not screen.query(EpisodeLog):  # the screen's widgets not (yet) in place: what arrived waits in the inbox
            return
        batch = self.inbox.drain()
        now = time.monotonic()
        with self.batch_update():
            screen.take(batch)
            if now - screen.last_stats >= self.stats_interval:
                if screen.stats_dirty:
                    screen.show(source.snapshot(screen.view_block, with_returns=screen.wants_returns))
                screen.last_stats = now
                screen.show_header()
                screen.say_silent_paths()
                screen.query_one(StatusLine).age()
            elif batch.events:
                screen.show_header()

    # ------------------------------------------------------------------ leaving
    def action_quit_run(self) -> None:
        self.leave(self.load_exit_code if self.load_error else EXIT_OK)

    def action_interrupt(self) -> None:
        self.leave(EXIT_INTERRUPTED)

    def leave(self, code: int) -> None:
        self.quitting = True
        self.finished_before_quit = self.engine is not None and self.source is not None and \
            self.source.state == EngineState.DONE
        if self.source is not None:
            self.source.stop()  # the engine stops now; run_app waits for it after the screen is restored
        self.exit(code, return_code=code)

    def on_unmount(self) -> None:
        if isinstance(self.source, LogSource):
            self.source.close()
