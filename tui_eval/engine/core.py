"""Runs the inference paths concurrently on the same held-out seeds and streams their records.

Each path runs in its own worker thread and walks the same seed blocks with its own cursor, so
both paths cover the same seeds in the same order and a slow path never stalls a fast one.
Every record is appended to the run log first, then folded into the statistics, then published.
"""

from __future__ import annotations

import collections
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable

from tui_eval.config.spec import SeedBlock
from tui_eval.engine.frozen import watch_for_frozen_steps
from tui_eval.engine.path_feed import PathFeed
from tui_eval.engine.proof import first_unproven_difference, restore_proof, start_proof
from tui_eval.engine.schedule import PathSchedule, next_block, restore_schedules
from tui_eval.errors import first_line
from tui_eval.feed import Heartbeat, Seed
from tui_eval.frames.hub import FrameHub
from tui_eval.log.lifecycle import EngineState
from tui_eval.log.store import RunLog
from tui_eval.long_lived import keep_built_objects
from tui_eval.paths.base import InferencePath, PathGivenUp, close_quietly
from tui_eval.records import (
    BlockStarted,
    EpisodeFinished,
    EpisodeRecord,
    Event,
    PathFailed,
    PathFinished,
    PathNotice,
    StateChanged,
)
from tui_eval.stats import ComparisonSummary, ExactProof, ReturnBounds, ReturnsSnapshot, RunStats
from tui_eval.stats.exact_proof import PENDING, CheckRequest

MAX_RESTARTS = 3
Subscriber = Callable[[Event], None]


class Engine:
    def __init__(
        self,
        paths: list[InferencePath],
        log: RunLog,
        seeds: SeedBlock,
        episodes: int | None = None,
        return_bounds: ReturnBounds | None = None,
        equivalence_margin: float | str | None = None,
        step_timeout: float | None = None,
        rebuild: Callable[[str, bool], InferencePath] | None = None,
        repeatable: bool = True,
        prove: Callable[[CheckRequest], dict] | None = None,
        action_tolerance: float | None = None,
    ):
        self.paths = {p.name: p for p in paths}
        self.step_timeout = step_timeout
        self._rebuild = rebuild  # (name, explore) -> a freshly loaded path, to replace one whose env froze
        self.log = log
        self.episodes = episodes
        self._return_bounds = return_bounds
        self._margin = equivalence_margin
        self._repeatable = repeatable  # False: the env is not a function of its reset seed (no exact verdict)
        # the check of a differing seed: same policy, repeatable env, noise floor (tui_eval/engine/proof.py)
        self._prove = prove
        self.action_tolerance = action_tolerance  # --action-tolerance (None: from the policies' type)
        self.proof = ExactProof() if prove is not None else None
        self._done_waits_for_proof = False
        self._closed = False
        self.blocks: list[SeedBlock] = [seeds]
        self._lock = threading.RLock()
        self._wake = threading.Condition(self._lock)
        self._state = {n: PathSchedule(cursor=seeds.start) for n in self.paths}
        self.heartbeat = Heartbeat()  # where the paths' envs note their steps, for the watchdog
        self.frames = FrameHub()  # idle (no rendering) until a viewer asks for frames
        for name, path in self.paths.items():
            if path.replicas > 1:  # its envs live in Ray workers: their frames are not sent back
                self.frames.tap(name).problem = "no frames from Ray workers (--workers): run without it to watch"
        self._pending_explore: dict[str, bool] = {}
        self._paused = False
        self._stopping = False
        self._enough = False  # decided early (--until-decided): no new episode starts
        self._finished: set[str] = set()
        self._all_done = threading.Event()
        self._subscribers: list[Subscriber] = []
        self.errors: list[PathFailed] = []
        #: why the log took no more episodes (a full disk, a file-size limit); the run stopped there
        self.log_failure: str | None = None
        # throughput bookkeeping: active (unpaused) seconds and steps per path
        self._t_start: float | None = None
        self._paused_since: float | None = None
        self._paused_total = 0.0
        self._done_at: float | None = None
        self.stats = self._new_stats()  # all blocks
        self.block_stats = self._new_stats()  # the current block only

    # ------------------------------------------------------------------ wiring
    def _new_stats(self) -> RunStats:
        deterministic = all(not self.explore_of(n) for n in self.paths)
        return RunStats(list(self.paths), deterministic, self._return_bounds, self._margin, self._repeatable,
                        self.proof)

    def explore_of(self, name: str) -> bool:
        """The path's explore setting, counting a change asked for with set_explore but not yet applied."""
        return self._pending_explore.get(name, self.paths[name].explore)

    def subscribe(self, fn: Subscriber) -> None:
        """`fn` is called from worker threads; it must be quick and thread-safe (queue or post a message)."""
        self._subscribers.append(fn)

    def _publish(self, event: Event) -> None:
        for fn in list(self._subscribers):
            fn(event)

    # ------------------------------------------------------------------ control
    @property
    def state(self) -> EngineState:
        if self._done_at is not None:
            return EngineState.DONE
        if self._stopping:
            return EngineState.STOPPING
        return EngineState.PAUSED if self._paused else EngineState.RUNNING

    @property
    def stop_requested(self) -> bool:
        """True once `stop` was called (the run ends before its episodes are all done)."""
        return self._stopping

    def start(self) -> None:
        keep_built_objects()  # the paths are built
        self._t_start = time.monotonic()
        for name in self.paths:
            self._start_worker(name)
        if self.step_timeout is not None:
            threading.Thread(target=watch_for_frozen_steps, args=(self,), name="watchdog", daemon=True).start()
        self._publish(StateChanged(EngineState.RUNNING))

    def _start_worker(self, name: str) -> None:
        generation = self._state[name].generation
        threading.Thread(target=self._work, args=(name, generation), name=f"path-{name}-{generation}",
                         daemon=True).start()

    def pause(self) -> None:
        """Start no new episode; episodes in flight finish and are recorded. Paths with workers of their
        own hold them first, so that no episode starts once the paused state is shown."""
        with self._lock:
            if self._paused or self._done_at is not None:
                return
            self._paused = True
            self._paused_since = time.monotonic()
        for path in list(self.paths.values()):
            path.hold()
        self._publish(StateChanged(EngineState.PAUSED))

    def resume(self) -> None:
        with self._lock:
            if not self._paused:
                return
            self._paused = False
            if self._paused_since is not None:
                self._paused_total += time.monotonic() - self._paused_since
                self._paused_since = None
            self._wake.notify_all()
        for path in list(self.paths.values()):
            path.release()
        self._publish(StateChanged(EngineState.RUNNING))

    def toggle_pause(self) -> None:
        self.resume() if self._paused else self.pause()

    def resample(self, block: SeedBlock | None = None, reason: str = "resampled") -> SeedBlock:
        """Move every path to a fresh held-out seed block (by default the next unused seeds)."""
        with self._lock:
            block = next_block(self.blocks[-1], self._state.values()) if block is None else block
            self.blocks.append(block)
            index = len(self.blocks) - 1
            for state in self._state.values():
                state.block = index
                state.cursor = block.start
                state.started -= len(state.given_back)  # never started: not run on the old block
                state.retry = collections.deque(s for s in state.retry if s not in state.given_back)
                state.given_back.clear()
            self.block_stats = self._new_stats()
            self._wake.notify_all()
        self._publish(BlockStarted(index, block, reason))
        return block

    def set_explore(self, name: str, explore: bool) -> SeedBlock:
        """Change path `name`'s explore setting; the path applies it between episodes, on a new block."""
        with self._lock:
            self._pending_explore[name] = explore  # stats keep each (path, explore) apart
        return self.resample(reason=f"explore {'on' if explore else 'off'} for {name}")

    def stop(self) -> None:
        """Stop as soon as possible: episodes in flight are abandoned, what finished is kept (a proof under
        way is abandoned too: its verdict stays undecided)."""
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
        self._publish(StateChanged(EngineState.STOPPING))
        self.proof_settled()

    def end_early(self) -> None:
        """Start no new episode, as if every path had reached its budget: the episodes in flight finish
        and are recorded, then the run is done (`--until-decided`, `tui_eval.engine.decide`)."""
        with self._lock:
            self._enough = True
            self._wake.notify_all()

    def comparison_now(self) -> ComparisonSummary | None:
        """The comparison of all blocks now, under the engine's lock (cheaper than `snapshot`)."""
        with self._lock:
            return self.stats.comparison_summary()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every path finished; True when they all did."""
        return self._all_done.wait(timeout)

    def close(self) -> None:
        self._closed = True
        if (ending := getattr(self._prove, "close", None)) is not None:
            ending()  # a replay under way (a hung step there would outlive the run)
        for path in self.paths.values():
            close_quietly(path)

    def restore(self, blocks: list[SeedBlock], records: list[EpisodeRecord]) -> None:
        """Continue a run from its log, before `start`: the blocks it had, its statistics, and per path the
        seeds it never finished (in flight when its process died) handed out again first, then the
        seeds after the last one it reached; no finished seed runs again, none is skipped."""
        self.blocks = list(blocks)
        last = len(self.blocks) - 1
        finished: dict[str, set[Seed]] = {n: set() for n in self.paths}
        for rec in (rec for rec in records if rec.path in self.paths):
            finished[rec.path].add((rec.seed, rec.block))
            self._state[rec.path].steps += rec.length
            self.stats.add(rec)
            if rec.block == last:
                self.block_stats.add(rec)
        restore_schedules(self._state, self.blocks, finished)
        restore_proof(self)

    # ------------------------------------------------------------------ numbers
    def active_seconds(self, until: float | None = None) -> float:
        """Seconds the run has been running (until `until`, default now or its end), not counting pauses."""
        if self._t_start is None:
            return 0.0
        end = until or self._done_at or time.monotonic()
        paused = self._paused_total
        if self._paused_since is not None:
            paused += max(0.0, end - self._paused_since)
        return max(1e-9, end - self._t_start - paused)

    def throughput(self, name: str) -> tuple[float, float]:
        """(episodes/s, env steps/s) of a path over its active time (up to when it finished)."""
        state = self._state[name]
        seconds = self.active_seconds(state.done_at)
        return self.stats.paths[name].episodes / seconds, state.steps / seconds

    def snapshot(self, current_block_only: bool = False) -> tuple[dict[str, dict], ComparisonSummary | None]:
        """Per-path summaries and the comparison's, taken under the engine's lock (stats are not thread-safe)."""
        stats = self.block_stats if current_block_only else self.stats
        with self._lock:
            paths = {name: s.summary() for name, s in stats.paths.items()}
            comparison = stats.comparison_summary()
        return paths, comparison

    def returns_snapshot(self, current_block_only: bool = False) -> dict[str, ReturnsSnapshot]:
        """Each path's valid returns and counts, frozen under the engine's lock (for histograms)."""
        stats = self.block_stats if current_block_only else self.stats
        with self._lock:
            return {name: s.returns_snapshot() for name, s in stats.paths.items()}

    def in_flight(self, name: str | None = None) -> int:
        """Episodes started and not yet recorded, of one path or over all paths."""
        with self._lock:
            states = self._state.values() if name is None else [self._state[name]]
            return sum(len(s.in_flight) for s in states)

    # ------------------------------------------------------------------ workers
    def _exhausted(self, name: str) -> bool:
        state = self._state[name]
        if self._enough:
            return True
        if state.retry:
            return False
        if self.episodes is not None and state.started >= self.episodes:
            return True
        block = self.blocks[state.block]
        return block.stop is not None and state.cursor >= block.stop

    def next_seed(self, name: str) -> Seed | None:
        """The path's next seed (one to retry first), or None: paused, stopping, or none left for it."""
        with self._lock:
            if self._stopping or self._paused or name in self._pending_explore or self._exhausted(name):
                return None
            state = self._state[name]
            if state.retry:
                key = state.retry.popleft()
                state.given_back.discard(key)
            else:
                key = (state.cursor, state.block)
                state.cursor += 1
                state.started += 1
            state.in_flight.add(key)
            return key

    def give_back(self, name: str, seeds: list[Seed]) -> None:
        """Seeds handed out but never started: handed out again first, in their order."""
        with self._lock:
            state = self._state[name]
            for key in sorted(seeds, reverse=True):  # handed out again first, in their order
                state.in_flight.discard(key)
                state.retry.appendleft(key)
                state.given_back.add(key)
            self._wake.notify_all()

    def _emit(self, rec: EpisodeRecord) -> None:
        try:
            self.log.append(rec)  # the log is the truth: written before anything shows it
        except sqlite3.OperationalError as exc:  # no room: the log keeps what it has, and the run stops there
            if self.log_failure is None:
                self.log_failure = str(exc)
                self.stop()
            return
        with self._lock:
            state = self._state[rec.path]
            state.in_flight.discard((rec.seed, rec.block))
            state.steps += rec.length
            self.stats.add(rec)
            if rec.block == len(self.blocks) - 1:
                self.block_stats.add(rec)
            to_prove = first_unproven_difference(self)
        self._publish(EpisodeFinished(rec))
        if to_prove is not None:
            start_proof(self, *to_prove)

    def _work(self, name: str, generation: int) -> None:
        feed = PathFeed(self, name)
        problem = getattr(self.paths.get(name), "frames_problem", None)
        if problem:  # its env renders nothing here: the frame view says why instead of waiting
            feed.frames.problem = problem
        state = self._state[name]
        state.worker_ident = threading.get_ident()

        def emit(rec: EpisodeRecord) -> None:
            if state.generation == generation:  # an abandoned (frozen) worker records nothing
                self._emit(rec)

        while state.generation == generation:
            path = self.paths[name]
            with self._lock:
                while self._paused and not self._stopping:
                    self._wake.wait()
                if self._stopping:
                    break
                if name in self._pending_explore:
                    path.set_explore(self._pending_explore.pop(name))
                if self._exhausted(name):
                    break
            try:
                path.run(feed, emit)
            except PathGivenUp:  # its workers died too often; the path said so through its feed
                break
            except Exception as exc:  # the policy side failed: the path is loaded afresh, its seeds run again
                if state.generation != generation:
                    return
                if self._path_failed(name, path, first_line(exc), traceback.format_exc()):
                    break
        if state.generation == generation:
            self._finish(name)

    def _path_failed(self, name: str, path: InferencePath, message: str, details: str = "",
                     close_old: bool = True) -> bool:
        """A path (not a world) failed: its episodes in flight are handed out again, not counted invalid,
        and the path is loaded afresh; True when it failed too often and is given up."""
        self._requeue_in_flight(name)
        gave_up = self._report_failure(name, message, details)
        if gave_up or self._rebuild is None or self._stopping:
            return gave_up
        try:
            fresh = self._rebuild(name, path.explore)
        except Exception as exc:  # whatever loading raises, the path is given up and says why
            self._report_failure(name, f"could not be loaded again: {first_line(exc)}", traceback.format_exc(),
                                 give_up=True)
            return True
        self.paths[name] = fresh
        if close_old:
            close_quietly(path)
        if self._closed:  # closed while the fresh path loaded: close saw the old one only
            close_quietly(fresh)
            return True
        return False

    def worker_lost(self, name: str, message: str, details: str = "") -> bool:
        """One of the path's remote workers died and is replaced (its seeds run again); True: give the path up."""
        return self._report_failure(name, message, details)

    def notice(self, name: str, message: str) -> None:
        """A note on path `name` for the user and the run's log, no failure (a worker is back, or waits for room)."""
        self._publish(PathNotice(name, message))

    def _report_failure(self, name: str, message: str, details: str, give_up: bool = False) -> bool:
        state = self._state[name]
        state.restarts += 1
        budget = MAX_RESTARTS * self.paths[name].replicas  # each remote worker may fail as often as a path
        failure = PathFailed(name, message, state.restarts, gave_up=give_up or state.restarts > budget,
                             details=details)
        self.errors.append(failure)
        self._publish(failure)
        return failure.gave_up

    def _requeue_in_flight(self, name: str) -> None:
        with self._lock:
            state = self._state[name]
            state.retry.extend(sorted(state.in_flight))
            state.in_flight.clear()

    def _finish(self, name: str) -> None:
        self._state[name].done_at = time.monotonic()
        self._publish(PathFinished(name))
        with self._lock:
            self._finished.add(name)
            done = len(self._finished) == len(self.paths)
            if done and self.proof is not None and self.proof.state == PENDING and not self._stopping:
                self._done_waits_for_proof = True  # the verdict is not final before the replay says
                return
        if done:
            self._mark_done()

    def _mark_done(self) -> None:
        with self._lock:
            if self._done_at is not None:
                return
            self._done_at = time.monotonic()
        self._all_done.set()
        self._publish(StateChanged(EngineState.DONE))

    # ------------------------------------------------------------------ exact proof (engine/proof.py)
    def proof_settled(self) -> None:
        """The proof ended (or the run is stopping): a run that waited for it is done."""
        with self._lock:
            waiting, self._done_waits_for_proof = self._done_waits_for_proof, False
        if waiting:
            self._mark_done()
