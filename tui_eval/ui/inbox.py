"""A thread-safe, bounded accumulator between the engine's worker threads and the app's refresh timer.

The engine calls `put` from its worker threads for every event; the app drains the inbox on a timer
(≤ 10 Hz). `put` is O(1) and memory is bounded whatever the episode rate: the inbox keeps the last
`keep` episodes of each path, and the last `keep` invalid ones apart (so a burst of valid episodes
never pushes an invalid one out of sight), and counts the rest. The statistics never come from here:
the engine folds every record into its running statistics itself.
"""

from __future__ import annotations

import collections
import itertools
import threading
from dataclasses import dataclass, field

from tui_eval.records import EpisodeFinished, EpisodeRecord, Event


@dataclass
class Batch:
    """What arrived since the last drain."""

    #: recent episodes (at most `keep` per path, plus invalid ones), as (arrival number, record), oldest first
    episodes: list[tuple[int, EpisodeRecord]] = field(default_factory=list)
    #: every other event (state changes, new blocks, failures), in arrival order; they are rare
    events: list[Event] = field(default_factory=list)
    #: episodes that arrived, per path, including those not kept
    arrived: dict[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.episodes or self.events)


class Inbox:
    def __init__(self, keep: int = 600):
        self.keep = keep
        self._lock = threading.Lock()
        self._seq = itertools.count()
        self._new()

    def _new(self) -> None:
        self._by_path: dict[str, collections.deque] = {}
        self._invalid: collections.deque = collections.deque(maxlen=self.keep)
        self._events: list[Event] = []
        self._arrived: dict[str, int] = {}

    def put(self, event: Event) -> None:
        """Called from any thread."""
        with self._lock:
            if isinstance(event, EpisodeFinished):
                self._keep(event.record)
            else:
                self._events.append(event)

    def put_many(self, records: list[EpisodeRecord]) -> None:
        """Many records at once (the log viewer's replay), under one lock."""
        with self._lock:
            for rec in records:
                self._keep(rec)

    def _keep(self, rec: EpisodeRecord) -> None:
        item = (next(self._seq), rec)
        self._arrived[rec.path] = self._arrived.get(rec.path, 0) + 1
        if rec.invalid:
            self._invalid.append(item)
            return
        queue = self._by_path.get(rec.path)
        if queue is None:
            queue = self._by_path[rec.path] = collections.deque(maxlen=self.keep)
        queue.append(item)

    def drain(self) -> Batch:
        with self._lock:
            by_path, invalid, events, arrived = self._by_path, self._invalid, self._events, self._arrived
            self._new()
        episodes = list(invalid)
        for queue in by_path.values():
            episodes.extend(queue)
        episodes.sort(key=lambda item: item[0])
        return Batch(episodes, events, arrived)
