"""How often a path's own process and the run's process talk while the path plays: records gathered for `GATHER_S`
per message and sent by the thread that plays the episodes, seeds offered `AHEAD_S` ahead of the path's pace.

Why: a thread that wakes in the child (to send records, to take an offer) must take the GIL from the thread that plays
episodes, and torch releases the GIL in every op: the waiting thread is signalled at each release, and the episode
thread waits whenever the other wins. rsl_rl's PointGoal demo at 64 worlds (~4,500 records/s), quiet 2-core machine:
with a pump thread that sent a message every 5 ms or so (an offer of seeds came back for each) the child switched
threads ~9,000 times a second and took 28-30 µs of CPU per env step (the same path in the run's process:
23 µs). Records sent by the episode thread every 20 ms, seeds offered 150 ms ahead in lumps: ~1,000 switches a
second, 23.5-25 µs; `bench/bench_rsl.py`, the path in its own process / in the run's process: 0.96 (0.83 before).
"""

from __future__ import annotations

import os
import time
from typing import Any

from tui_eval.isolation.record_wire import encode

GATHER_S = 0.02  # the child lets records gather this long after a message, while it holds seeds for the meantime
AHEAD_S = 0.15  # the run keeps the child this far ahead in seeds (beyond one per env), at the pace it plays
MARGIN = 2.0  # the child gathers only while the seeds it holds last this many gathers at its pace
SPAN_S = 0.05  # the rate is measured over spans this long at least
GAP_S = 0.25  # no episode ended for this long: the path paused or waited for its next run


class EpisodeRate:
    """Episodes a path ends per second, over the last span of at least `SPAN_S` in which it played without a gap
    (a pause, the time between runs: not its pace; the rate before the gap stands until a new span is measured)."""

    def __init__(self) -> None:
        self.per_s = 0.0
        self._since = self._last = time.monotonic()
        self._count = 0

    def add(self, episodes: int) -> float:
        now = time.monotonic()
        if now - self._last > GAP_S:  # these ended over the gap: a new span starts
            self._since, self._count = now, 0
        else:
            self._count += episodes
            if now - self._since >= SPAN_S:
                self.per_s = self._count / (now - self._since)
                self._since, self._count = now, 0
        self._last = now
        return self.per_s

    def seeds_for(self, seconds: float) -> int:
        """Seeds the path starts in `seconds` at this rate."""
        return int(self.per_s * seconds) + 1


class RecordSender:
    """The child's records on their way to the run: sent by the episode thread as it finishes them, once `GATHER_S`
    has passed since the last message, at once while the path holds few seeds (the run tops it up on each message,
    unless it has said it is `dry`) and with the last episode the path holds; the pump thread sends what a lull left
    behind (`flush`)."""

    def __init__(self, wire: Any, worker: Any, ahead: int):
        self.wire, self.worker, self.ahead = wire, worker, ahead
        self.rate = EpisodeRate()
        self.sent_at = 0.0
        self.dry = False  # the run said that no seed follows the last offer (the next offer says otherwise)

    def on_record(self, running: int, queued: int) -> None:
        """In the episode thread, after each record: the seeds the path runs and those queued for it, then."""
        now = time.monotonic()
        if now - self.sent_at < GATHER_S and (running or queued) and (
                self.dry or queued >= max(self.ahead, self.rate.seeds_for(MARGIN * GATHER_S))):
            return
        self.flush(now)

    def flush(self, now: float) -> bool:
        """Send the records waiting (and the path's failure or frozen step); True when it failed or froze."""
        try:
            with self.wire.lock:  # taken and sent in one go: messages keep the records' order
                records, error, frozen = self.worker.poll(0.0)
                if records or error is not None or frozen is not None:
                    self.wire.conn.send(("records", encode(records), error, frozen))
                    self.sent_at = now
                    self.rate.add(len(records))
        except (EOFError, OSError):  # the run's process is gone
            os._exit(0)
        return error is not None or frozen is not None
