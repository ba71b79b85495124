"""Handing seeds to the worlds that run episodes, and noticing a world whose step never returns.

`SeedFeed` is the one idea: something that hands out `(seed, block)` pairs, one per episode to start,
and None when no episode should start now (paused, stopping, block done). The engine makes one per path;
envs built once, before any run, hold a `FeedRelay`, which forwards to the feed of the `run` call in
progress. A feed carries the run's `Heartbeat`, where envs note the steps they are in, and may carry a `frames`
tap, where the env whose frames are shown sends them (read with getattr: optional).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

#: (seed, block): which seed an episode runs and the seed block it belongs to
Seed = tuple[int, int]


class Heartbeat:
    """Env steps in progress, per thread: a step can hang forever inside a simulator, and the engine's
    watchdog reads this to notice it and to tell the frozen world's episode from the others in flight.

    Each thread has a slot of its own, a list `[started, seed, block]` that only it writes, in place (`started`
    None: not stepping). A step costs no lock and, where the stepping code keeps its slot (`slot`: GuardedEnv),
    no call: its seed and block are written, then its start; at its end, None. The watchdog copies a slot in one
    step under the GIL, so it sees a step whole or not at all.
    """

    def __init__(self) -> None:
        self._slots: dict[int, list[Any]] = {}

    def slot(self) -> list[Any]:
        """The calling thread's slot (made on its first step)."""
        ident = threading.get_ident()
        slot = self._slots.get(ident)
        if slot is None:
            slot = self._slots.setdefault(ident, [None, None, 0])
        return slot

    def step_started(self, seed: int | None, block: int, now: float | None = None) -> int:
        """The calling thread starts stepping the world running `seed` (None: several worlds at once), at `now`
        (time.perf_counter(), which a caller that times the step has read already). Its key, for `step_ended`."""
        slot = self.slot()
        slot[1], slot[2] = seed, block
        slot[0] = time.perf_counter() if now is None else now  # last: a slot with a start is whole
        return threading.get_ident()

    def step_ended(self, ident: int | None = None) -> None:
        """The step that `step_started` returned `ident` for ended (None: the calling thread's)."""
        slot = self._slots.get(threading.get_ident() if ident is None else ident)
        if slot is not None:
            slot[0] = None

    def oldest(self) -> tuple[float, int | None, int] | None:
        """The step in progress that started first, in any thread (None: no step in progress)."""
        steps = [step for step in map(tuple, list(self._slots.values())) if step[0] is not None]
        return min(steps, default=None, key=lambda step: step[0])

    def stepping(self, thread_id: int) -> tuple[float, int | None, int] | None:
        """(time.perf_counter() at its start, seed, block) of the step in progress in that thread, if any."""
        slot = self._slots.get(thread_id)
        step = None if slot is None else tuple(slot)
        return None if step is None or step[0] is None else step


class SeedFeed(Protocol):
    """Hands a path the seeds it should start episodes with, one at a time."""

    def take(self) -> Seed | None:
        """(seed, block) for the next episode, or None: start no new episode now (paused, stopping, done)."""

    @property
    def cancelled(self) -> bool:
        """True when the run is being stopped: abandon episodes in flight and return promptly."""

    @property
    def heartbeat(self) -> Heartbeat | None:
        """Where envs note the steps they are in (None: nobody watches)."""


class FeedRelay:
    """The SeedFeed of envs built once: forwards to the feed of the `run` call in progress (between calls
    it hands out nothing). With `track`, it remembers which of the seeds it handed out are still running
    (`finish` reports them done): for a loop that learns of finished episodes only in batches."""

    def __init__(self, track: bool = False) -> None:
        self.feed: SeedFeed | None = None
        self.track = track
        self.running: set[Seed] = set()
        self.dry = False  # the feed last had nothing to hand out
        self._lock = threading.Lock()

    def take(self) -> Seed | None:
        seed = None if self.feed is None else self.feed.take()
        if not self.track:
            return seed
        with self._lock:
            self.dry = seed is None
            if seed is not None:
                self.running.add(seed)
        return seed

    def finish(self, key: Seed) -> bool:
        """True the first time a running seed is reported finished."""
        with self._lock:
            if key in self.running:
                self.running.remove(key)
                return True
            return False

    def running_now(self) -> set[Seed]:
        """A copy of the seeds handed out and not reported finished (with `track`)."""
        with self._lock:
            return set(self.running)

    @property
    def cancelled(self) -> bool:
        return self.feed is not None and self.feed.cancelled

    @property
    def heartbeat(self) -> Heartbeat | None:
        return None if self.feed is None else self.feed.heartbeat

    @property
    def frames(self) -> Any:
        """The path's frame tap (tui_eval.frames.hub.PathTap), where its shown env's frames go; or None."""
        return getattr(self.feed, "frames", None)


class SupervisedFeed(SeedFeed, Protocol):
    """The engine's feed as a path with remote workers uses it: it also takes back seeds that never
    started and hears of a worker that died."""

    def give_back(self, seeds: list[Seed]) -> None:
        """Seeds taken but never started: hand them out again (first)."""

    def worker_lost(self, message: str, details: str = "") -> bool:
        """A worker died and is being replaced (its seeds run again); True when the path is given up."""


OFFERS_WAIT_S = 1.0  # a hold waits this long at most for offers sent before it that run after it


class HoldOrder:
    """Hold and release for a threaded Ray actor that queues the seeds it is offered, right when the actor runs its
    calls out of order (Ray keeps no order for a threaded actor's calls). The driver numbers its holds and releases
    (`control`: one older than the last applied is ignored; None: in order, as a path process reads its pipe) and
    counts its offers; a hold waits, briefly, for the offers sent before it, so that their seeds are handed back
    rather than left queued until the release. Every method runs under the actor's lock, the `Condition` given."""

    def __init__(self, lock: threading.Condition) -> None:
        self._lock = lock
        self.held = False  # paused: queued seeds wait, none is handed out
        self._offers_seen = 0
        self._control_seen = -1

    def offered(self) -> None:
        self._offers_seen += 1
        self._lock.notify_all()

    def hold(self, control: int | None, offers_sent: int) -> bool:
        """Hold, once the offers sent before are in; False for a hold older than the last release (ignored)."""
        if not self._in_order(control):
            return False
        self.held = True
        self._lock.wait_for(lambda: self._offers_seen >= offers_sent, timeout=OFFERS_WAIT_S)
        return True

    def release(self, control: int | None) -> None:
        if self._in_order(control):
            self.held = False
            self._lock.notify_all()

    def _in_order(self, control: int | None) -> bool:
        if control is None:
            return True
        if control < self._control_seen:
            return False
        self._control_seen = control
        return True
