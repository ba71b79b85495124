"""What the app looks at: a live engine, or a run log read back (read-only). Plain Python, no Textual.

Both sources have the same face (`snapshot.RunSource`): a frozen `RunSnapshot` of all blocks or of the
current block (statistics, the run's state, blocks, explore settings, throughput), its facts, and (live
only, or through a live run's control channel) the controls. Events reach the app through an `Inbox` that
the source fills from its own threads: the engine's workers, or the log viewer's poller.

The app never reads live statistics: summaries and returns are taken under the lock records are added
under (the engine's, or the poller's) and handed to widgets as frozen payloads.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from tui_eval.config.spec import SeedBlock
from tui_eval.engine.core import Engine
from tui_eval.frames.hub import FrameView, Key
from tui_eval.frames.wire import view_from_json
from tui_eval.log.store import RunLog
from tui_eval.records import BlockStarted, EpisodeRecord, StateChanged
from tui_eval.stats import ComparisonSummary, ReturnsSnapshot, RunStats
from tui_eval.views.snapshot import RunSnapshot, engine_snapshot
from tui_eval.views.summary import replay

from .inbox import Inbox

FACT_KEYS = ("algorithm", "env", "module")


class LiveSource:
    """A running engine (built by session.start_engine)."""

    readonly = False

    def __init__(self, engine: Engine, inbox: Inbox, facts: dict[str, str], device: str):
        self.engine = engine
        self.inbox = inbox
        self.facts = facts
        self.device = device
        self.paths = list(engine.paths)
        self.log_path = Path(engine.log.path)
        engine.subscribe(inbox.put)

    # ---- numbers
    @property
    def stats(self) -> RunStats:
        return self.engine.stats

    @property
    def block_stats(self) -> RunStats:
        return self.engine.block_stats

    @property
    def blocks(self) -> list[SeedBlock]:
        return self.engine.blocks

    @property
    def target(self) -> int | None:
        return self.engine.episodes

    @property
    def state(self) -> str:
        return self.engine.state

    @property
    def errors(self):
        return self.engine.errors

    def elapsed(self) -> float:
        return self.engine.active_seconds()

    def summaries(self, current_block_only: bool) -> tuple[dict[str, dict], ComparisonSummary | None]:
        """Per-path and comparison summaries, read under the engine's lock (stats are not thread-safe)."""
        return self.engine.snapshot(current_block_only)

    def snapshot(self, current_block_only: bool = False, with_returns: bool = False,
                 numbers: bool = True) -> RunSnapshot:
        """The run now; without `numbers` (the header between statistics refreshes) no summaries."""
        return engine_snapshot(self.engine, current_block_only, with_returns, numbers)

    def records(self) -> list[EpisodeRecord]:
        return self.engine.log.records()

    def returns(self, current_block_only: bool) -> dict[str, ReturnsSnapshot]:
        return self.engine.returns_snapshot(current_block_only)

    def throughput(self, name: str) -> tuple[float, float]:
        return self.engine.throughput(name)

    def explore(self, name: str) -> bool | None:
        return self.engine.explore_of(name)

    def meta(self) -> dict[str, Any]:
        return self.engine.log.meta()

    def frames(self, paths: list[str], key: Key | None, history: bool, size: tuple[int, int]) -> FrameView | None:
        """The shown envs' frames (the panes scale them; `size` matters on the wire only)."""
        self.engine.frames.want()
        return self.engine.frames.view(paths, key, history)

    # ---- controls
    def start(self) -> None:
        self.engine.start()

    def toggle_pause(self) -> None:
        self.engine.toggle_pause()

    def resample(self) -> SeedBlock:
        return self.engine.resample()

    def set_explore(self, name: str, explore: bool) -> SeedBlock:
        return self.engine.set_explore(name, explore)

    def stop(self) -> None:
        self.engine.stop()

    def close(self) -> None:
        pass


class LogSource:
    """A run log read back while it grows (or after it finished): polled, replayed into fresh RunStats.

    A daemon thread reads new records in chunks (`records_with_ids(after_id=…, limit=…)`), folds them
    into the statistics and hands the recent ones to the inbox, so even a log of a million episodes
    is replayed without holding its records.
    """

    CHUNK = 20_000
    STALE_S = 30.0

    def __init__(self, log_path: str | Path, inbox: Inbox, poll_s: float = 0.5, control=None):
        self.log_path = Path(log_path)
        self.inbox = inbox
        self.poll_s = poll_s
        self.control = control  # a live run's control channel (runtime.control.ControlClient), or None
        self.log = RunLog(self.log_path, readonly=True)
        self._stats_lock = threading.Lock()
        self._meta = self.log.meta()
        meta = self._meta
        self.paths = list(meta.get("paths") or [])
        spec = meta.get("spec") or {}
        self.facts = {"checkpoint": str(meta.get("checkpoint", "?")), "kind": str(meta.get("kind", "?")),
                      **{k: v for k, v in (meta.get("facts") or {}).items() if k in FACT_KEYS}}
        self.device = str(spec.get("device", "?"))
        self.target = spec.get("episodes")
        seeds = meta.get("seeds") or [0, None]
        self.blocks: list[SeedBlock] = [SeedBlock(int(seeds[0]), seeds[1])]
        self.stats = self._fresh_stats()
        self.block_stats = self._fresh_stats()
        self.errors: list = []
        self._explore = dict(meta.get("explore") or {})
        self._after_id = 0
        self._replayed = threading.Event()  # set once the log was read to its end at least once
        self._stop = threading.Event()
        self._state = "loading"
        self._last_at: float | None = None
        self._thread = threading.Thread(target=self._poll, name="log-viewer", daemon=True)

    def _fresh_stats(self) -> RunStats:
        stats = replay(self._meta, [])
        for name in stats.paths:
            if name not in self.paths:
                self.paths.append(name)
        return stats

    # ---- polling
    def start(self) -> None:
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception as exc:  # a log being written can be briefly unreadable: try again
                self._state = f"unreadable ({type(exc).__name__})"
            if self._stop.wait(self.poll_s if self._replayed.is_set() else 0.0):
                return

    def poll_once(self) -> int:
        """Read what is new (one chunk at most); returns how many records were read."""
        rows = list(self.log.records_with_ids(after_id=self._after_id, limit=self.CHUNK))
        records = []
        for row_id, rec in rows:
            self._after_id = row_id
            if rec.path not in self.stats.paths:
                continue
            if rec.block > len(self.blocks) - 1:
                while len(self.blocks) <= rec.block:
                    self.blocks.append(SeedBlock(rec.seed, None))
                self.block_stats = self._fresh_stats()
                self.inbox.put(BlockStarted(rec.block, self.blocks[rec.block], "seen in the log"))
            if rec.explore is not None:
                self._explore[rec.path] = rec.explore
            with self._stats_lock:
                self.stats.add(rec)
                if len(self.blocks) > 1 and rec.block == len(self.blocks) - 1:  # one block: stats is it
                    self.block_stats.add(rec)
            records.append(rec)
        if records:
            self.inbox.put_many(records)
        if len(rows) < self.CHUNK:
            self._meta = self.log.meta()
            self._last_at = self.log.last_finished_at() or self._last_at
            self._follow_meta()
            self._replayed.set()
        return len(rows)

    def _follow_meta(self) -> None:
        """The run's state, blocks and explore settings as its owner keeps them in the log."""
        status = str(self._meta.get("status", "?"))
        state = {"running": str(self._meta.get("state") or "running"), "finished": "done"}.get(status, status)
        if state in ("running", "paused", "loading") and self.control is None and self.idle_seconds() > self.STALE_S:
            state = "stale"  # says running, but nothing arrived for a while: the run may have died
        self._set_state(state)
        blocks = self._meta.get("blocks")
        if blocks and len(blocks) >= len(self.blocks):
            if len(blocks) > len(self.blocks):
                self.block_stats = self._fresh_stats()
            self.blocks = [SeedBlock(int(a), b) for a, b in blocks]
        self._explore.update(self._meta.get("explore") or {})

    def _set_state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self.inbox.put(StateChanged(state))

    def summaries(self, current_block_only: bool) -> tuple[dict[str, dict], ComparisonSummary | None]:
        """Per-path and comparison summaries, read under the lock the poller adds records under."""
        snapshot = self._meta.get("snapshot")
        if not self._replayed.is_set() and snapshot and not current_block_only:
            # a long log is still being read: show the numbers its run last wrote (final when finished)
            comparison = snapshot["comparison"]
            return snapshot["paths"], None if comparison is None else ComparisonSummary.from_json(comparison)
        stats = self.block_stats if current_block_only and len(self.blocks) > 1 else self.stats
        with self._stats_lock:
            paths = {name: s.summary() for name, s in stats.paths.items()}
            return paths, stats.comparison_summary()

    def returns(self, current_block_only: bool) -> dict[str, ReturnsSnapshot]:
        """Each path's valid returns and counts, frozen under the poller's lock."""
        stats = self.block_stats if current_block_only else self.stats
        with self._stats_lock:
            return {name: s.returns_snapshot() for name, s in stats.paths.items()}

    def snapshot(self, current_block_only: bool = False, with_returns: bool = False,
                 numbers: bool = True) -> RunSnapshot:
        """The log as read so far; without `numbers` (the header between statistics refreshes) no summaries."""
        summaries, comparison = self.summaries(current_block_only) if numbers else ({}, None)
        with self._stats_lock:
            done = {name: s.episodes for name, s in self.stats.paths.items()}
        return RunSnapshot(
            paths=tuple(self.paths), state=self._state, summaries=summaries, comparison=comparison,
            returns=self.returns(current_block_only) if numbers and with_returns else None,
            blocks=tuple(self.blocks), explore={n: self.explore(n) for n in self.paths},
            throughput={n: self.throughput(n) for n in self.paths}, done=done, elapsed=self.elapsed(),
            idle_seconds=self.idle_seconds(), block_only=current_block_only)

    def records(self) -> list[EpisodeRecord]:
        return self.log.records()

    def idle_seconds(self) -> float:
        """Seconds since the newest record was written (or since the run started, before any)."""
        last = self._last_at or self._meta.get("started_at")
        return 0.0 if not last else max(0.0, time.time() - last)

    # ---- numbers
    @property
    def state(self) -> str:
        return self._state

    def elapsed(self) -> float:
        """Wall seconds from the run's start to its end, its newest record (stale), or now (live)."""
        started = self._meta.get("started_at")
        if not started:
            return 0.0
        end = self._meta.get("finished_at")
        if end is None:
            end = self._last_at if self._state == "stale" and self._last_at else time.time()
        return max(0.0, end - started)

    def throughput(self, name: str) -> tuple[float, float]:
        """Episodes and env steps per wall second over `elapsed` (which includes loading and pauses)."""
        seconds = max(self.elapsed(), 1e-9)
        stats = self.stats.paths[name]
        steps = getattr(stats, "_len_sum", 0)  # env steps of valid episodes (invalid ones are short)
        return stats.episodes / seconds, steps / seconds

    def explore(self, name: str) -> bool | None:
        return self._explore.get(name)

    def meta(self) -> dict[str, Any]:
        return dict(self._meta)

    def frames(self, paths: list[str], key: Key | None, history: bool, size: tuple[int, int]) -> FrameView | None:
        """Frames from the live run's owner, over its control channel; None when the run is not live."""
        if self.control is None:
            return None
        reply = self._command("frames", paths=paths, key=list(key) if key else None, history=history,
                              size=list(size))
        return view_from_json(reply["view"])

    # ---- controls: through the live run's control channel, when it has one
    @property
    def readonly(self) -> bool:
        return self.control is None

    def _command(self, cmd: str, **args: Any) -> dict[str, Any]:
        assert self.control is not None
        reply = self.control.send(cmd, **args)
        if reply.get("state"):
            self._set_state(str(reply["state"]))
        if reply.get("blocks"):
            self.blocks = [SeedBlock(int(a), b) for a, b in reply["blocks"]]
        self._explore.update(reply.get("explore") or {})
        if not reply.get("ok"):
            raise RuntimeError(reply.get("error", "the run refused"))
        return reply

    def toggle_pause(self) -> None:
        self._command("toggle_pause")

    def resample(self) -> SeedBlock:
        self._command("resample")
        return self.blocks[-1]

    def set_explore(self, name: str, explore: bool) -> SeedBlock:
        self._command("explore", path=name, on=explore)
        return self.blocks[-1]

    def stop(self) -> None:
        """Stop following the log (the run itself goes on)."""
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:  # started
            self._thread.join(timeout=2.0)
        self.log.close()
