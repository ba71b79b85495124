"""The driver's side of a path whose episodes run in Ray actors (isolation/worker.py).

Seeds flow from the engine's feed to the actors in small blocks: each actor holds at most as many seeds
as it has envs plus `block` waiting ones, so a pause leaves little to hand back and stop reaches every
actor at once. Records stream back through long polls and are emitted here, in the process that owns
the log. An actor that dies (killed, OOM, node lost: its poll raises) or whose path fails is replaced;
the seeds it had that were not recorded run again first, on whichever actor asks next. A seed is
emitted only by the actor it was offered to and only while it was outstanding there, so none is
counted twice. An actor whose env step froze (its own watchdog, `--step-timeout`) has that episode
recorded invalid and is replaced the same way; a replacement the cluster has no room for is said so. A pause holds
every actor: the seeds it had not started go back to the feed, those of an actor that answers late once the run
loop has its answer (`feed.HoldOrder`: the actor may run the driver's calls out of order).
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tui_eval.errors import first_line
from tui_eval.feed import Seed, SeedFeed, SupervisedFeed
from tui_eval.paths.base import Emit, InferencePath, PathGivenUp
from tui_eval.records import EpisodeRecord

POLL_S = 0.05  # how long an actor waits for a record before answering a poll empty
LOAD_TIMEOUT_S = 600.0  # loading a path in an actor: imports, restore, maybe a node to be placed on
CONTROL_TIMEOUT_S = 2.0  # hold/release/set_explore answers: a live actor answers in milliseconds
NO_ROOM_S = 10.0  # a replacement still not placed after this, with no CPU free on the cluster: say so
DEFAULT_BLOCK = 4  # seeds offered per request, and waiting at most per actor beyond its envs


@dataclass(eq=False)
class _Slot:
    """One actor of the pool and what the driver knows of it."""

    handle: Any
    info_ref: Any = None  # its placement, until it arrives (the actor is loading)
    info: dict[str, Any] | None = None
    poll_ref: Any = None
    outstanding: set[Seed] = field(default_factory=set)  # offered to it, not recorded yet
    offers_sent: int = 0  # a hold tells the actor how many to wait for (calls may run out of order there)
    spawned_at: float = field(default_factory=time.monotonic)
    said_waiting: bool = False  # told the user it waits for room on the cluster

    @property
    def where(self) -> str:
        return "loading" if self.info is None else f"{self.info['host']} pid {self.info['pid']}"


class RemotePath(InferencePath):
    def __init__(self, name: str, explore: bool, spawn: Callable[[bool], Any], workers: int,
                 block: int = DEFAULT_BLOCK, wait: bool = True):
        """Spawn the actors; with `wait`, return once they have loaded (else `wait_loaded` does)."""
        self.name, self.explore, self.replicas = name, explore, workers
        self._spawn = spawn  # explore -> a new actor handle
        self._block = block
        self._lock = threading.Lock()
        self._pending: collections.deque[Seed] = collections.deque()  # seeds of lost actors: run first
        self._feed: SupervisedFeed | None = None
        self._held = False
        self._handing = threading.Lock()  # a hold falls between two offers, never between a seed's take and offer
        self._control = 0  # holds and releases are numbered: the actor ignores one that runs after a newer one
        self._late_holds: dict[Any, _Slot] = {}  # holds not answered in time: their seeds are handed back later
        self.restarts = 0
        self._slots = [_Slot(spawn(explore)) for _ in range(workers)]
        self._loading: list[Any] | None = [s.handle.placement.remote() for s in self._slots]
        self._note_placement()
        if wait:
            self.wait_loaded()

    def wait_loaded(self) -> None:
        import ray

        if self._loading is None:
            return
        try:
            infos = ray.get(self._loading, timeout=LOAD_TIMEOUT_S)
        except BaseException:
            self.close()
            raise
        self._loading = None
        for slot, info in zip(self._slots, infos):
            slot.info = info
        self._note_placement()
        self.description = (f"{infos[0]['description']}; in {self.replicas} Ray actors, "
                            f"seeds in blocks of {self._block}")

    def _note_placement(self) -> None:
        self.placement = tuple(slot.where for slot in self._slots)

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        import ray

        self.wait_loaded()
        self._feed = feed  # type: ignore[assignment]  # the engine's feed is a SupervisedFeed
        dry = False
        try:
            while not feed.cancelled:
                dry = self._top_up(feed) or dry
                with self._lock:
                    busy = self._pending or any(s.outstanding for s in self._slots)
                if dry and not busy:
                    return
                waiting = self._refs_to_wait_on()
                ready, _ = ray.wait(list(waiting), num_returns=1, timeout=0.1)
                if ready:
                    ready, _ = ray.wait(list(waiting), num_returns=len(waiting), timeout=0)
                for ref in ready:
                    if not self._hold_answered(ref):
                        self._receive(waiting[ref], ref, emit)
                self._say_if_waiting_for_room(feed)
                dry = dry and not self._pending
            for slot in self._slots:
                slot.handle.cancel.remote()
        finally:
            self._feed = None

    def _say_if_waiting_for_room(self, feed: SeedFeed) -> None:
        """A replacement Ray cannot place (its node left, nothing free): the run says so, and waits."""
        import ray

        now = time.monotonic()
        late = [s for s in self._slots if s.info is None and not s.said_waiting and now - s.spawned_at > NO_ROOM_S]
        if not late or ray.available_resources().get("CPU", 0) >= 1:
            return
        for slot in late:
            slot.said_waiting = True
        working = sum(s.info is not None for s in self._slots)
        message = (f"{len(late)} Ray worker(s) wait for room: the cluster has no free CPU for them; "
                   + (f"going on with {working} worker(s)" if working else "waiting for a node to join"))
        notice = getattr(feed, "notice", None)
        if notice is not None:
            notice(message)

    def _refs_to_wait_on(self) -> dict[Any, _Slot]:
        waiting = {}
        for slot in self._slots:
            if slot.info is None:
                waiting[slot.info_ref] = slot
            else:
                if slot.poll_ref is None:
                    slot.poll_ref = slot.handle.poll.remote(POLL_S)
                waiting[slot.poll_ref] = slot
        with self._lock:
            waiting.update(self._late_holds)
        return waiting

    def _top_up(self, feed: SeedFeed) -> bool:
        """Offer seeds to actors short of work; True when the feed had none left to give."""
        with self._handing:
            return self._offer_to_each(feed)

    def _offer_to_each(self, feed: SeedFeed) -> bool:
        dry = False
        for slot in self._slots:
            if slot.info is None:
                continue
            # a whole batch waiting: a batched simulator's next batch runs with the seeds the actor holds
            room = slot.info["capacity"] + max(self._block, slot.info["capacity"]) - len(slot.outstanding)
            seeds: list[Seed] = []
            while len(seeds) < min(room, self._block):
                with self._lock:
                    seed = self._pending.popleft() if self._pending else None
                seed = seed or feed.take()
                if seed is None:
                    dry = True
                    break
                seeds.append(seed)
            if seeds:
                with self._lock:
                    slot.outstanding.update(seeds)
                slot.offers_sent += 1
                slot.handle.offer.remote(seeds)
        return dry

    def _receive(self, slot: _Slot, ref: Any, emit: Emit) -> None:
        import ray

        try:
            answer = ray.get(ref)
        except ray.exceptions.RayError as exc:  # the actor is gone (killed, OOM, node lost) or failed to load
            self._replace(slot, f"died ({first_line(exc, 160)})", str(exc))
            return
        if slot.info is None:
            slot.info = answer
            self._note_placement()
            return
        slot.poll_ref = None
        records, error, frozen = answer
        for record in records:
            key = (record.seed, record.block)
            with self._lock:
                mine = key in slot.outstanding
                slot.outstanding.discard(key)
            if mine:
                emit(record)
        if frozen is not None:
            self._frozen(slot, frozen, emit)
        elif error is not None:
            self._replace(slot, f"failed: {error[0]}", error[1])

    def _frozen(self, slot: _Slot, frozen: tuple[int, int, str], emit: Emit) -> None:
        """A step in the actor never returned: that episode is invalid, the actor replaced (the rest run again)."""
        seed, block, why = frozen
        with self._lock:
            mine = (seed, block) in slot.outstanding
            slot.outstanding.discard((seed, block))
        if mine:
            emit(EpisodeRecord(path=self.name, seed=seed, block=block, ret=0.0, length=0, success=False,
                               invalid=True, reason=why, explore=self.explore))
        self._replace(slot, f"froze: {why}; its episode of seed {seed} is invalid" if mine else f"froze: {why}", "")

    def _replace(self, slot: _Slot, what: str, details: str) -> None:
        """The actor's unfinished seeds go first to whichever actor asks next; a fresh actor takes its place."""
        import ray

        where = slot.where
        with self._lock:
            lost = sorted(slot.outstanding)
            slot.outstanding.clear()
            self._pending.extend(lost)
        try:
            ray.kill(slot.handle, no_restart=True)
        except Exception:  # already gone
            pass
        self.restarts += 1
        message = f"Ray worker {where} {what}; {len(lost)} unfinished seed(s) run again, a new worker replaces it"
        feed = self._feed
        if feed is not None and feed.worker_lost(message, details):
            self.close()
            raise PathGivenUp(message)
        slot.handle, slot.info, slot.poll_ref, slot.offers_sent = self._spawn(self.explore), None, None, 0
        slot.spawned_at, slot.said_waiting = time.monotonic(), False
        slot.info_ref = slot.handle.placement.remote()
        self._note_placement()
        if self._held:
            slot.handle.hold.remote(self._control)

    # ------------------------------------------------------------------ control
    def hold(self) -> None:
        """Each actor starts nothing more; the seeds they had not started are handed back to the feed (those
        of an actor that answers late, once it does: the run loop waits on its answer)."""
        import ray

        with self._handing:
            self._held = True
            self._control += 1
            asked = {s.handle.hold.remote(self._control, s.offers_sent): s for s in self._slots if s.info is not None}
        ready, late = ray.wait(list(asked), num_returns=len(asked), timeout=CONTROL_TIMEOUT_S) if asked else ([], [])
        unstarted = [seed for ref in ready for seed in self._claim_unstarted(asked[ref], ref)]
        with self._lock:
            self._late_holds.update((ref, asked[ref]) for ref in late)
            unstarted += self._pending
            self._pending.clear()
        self._give_back(unstarted)

    def _hold_answered(self, ref: Any) -> bool:
        """A late hold's answer, in the run loop: its seeds handed back; False for any other answer."""
        if not self._late_holds:  # every answer the run loop reads: no lock while no hold is late
            return False
        with self._lock:
            slot = self._late_holds.pop(ref, None)
        if slot is None:
            return False
        self._give_back(self._claim_unstarted(slot, ref))
        return True

    def _claim_unstarted(self, slot: _Slot, ref: Any) -> list[Seed]:
        """The seeds an actor's hold handed back that are still its own (not lost with it and moved on)."""
        import ray

        try:
            seeds = ray.get(ref)
        except ray.exceptions.RayError:  # dead: the run loop sees it and replaces it, its seeds run again
            return []
        with self._lock:
            mine = [seed for seed in (tuple(s) for s in seeds) if seed in slot.outstanding]
            slot.outstanding.difference_update(mine)
        return mine

    def _give_back(self, seeds: list[Seed]) -> None:
        feed = self._feed
        if feed is not None and seeds:
            feed.give_back(seeds)

    def release(self) -> None:
        with self._handing:
            self._held = False
            self._control += 1
            control = self._control
        self._call_all("release", control)

    def set_explore(self, explore: bool) -> None:
        self.explore = explore
        self._call_all("set_explore", explore)

    def _call_all(self, method: str, *args: Any) -> None:
        import ray

        refs = [getattr(s.handle, method).remote(*args) for s in self._slots]
        for ref in refs:
            try:
                ray.get(ref, timeout=CONTROL_TIMEOUT_S if method != "set_explore" else LOAD_TIMEOUT_S)
            except ray.exceptions.RayError:  # a dead actor is replaced by the run loop, with the new setting
                pass

    def close(self) -> None:
        import ray

        for slot in self._slots:
            try:
                ray.get(slot.handle.close.remote(), timeout=CONTROL_TIMEOUT_S)
            except Exception:  # dead, loading or stuck: it is killed below either way
                pass
            try:
                ray.kill(slot.handle, no_restart=True)
            except Exception:
                pass
