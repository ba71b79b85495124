"""Seeds for envs that live in RLlib's remote evaluation env runners (`evaluate` with `--workers N`).

Those envs are built in other processes, so they cannot read the run's feed: each takes its seed at
reset from a `SeedDispenser`, a small named Ray actor on the driver's node that the path keeps topped up
with a few seeds per runner. A seed leaves the dispenser only when an env takes it, so a pause (`hold`)
hands back exactly the seeds no episode started with. The dispenser notes which runner process took each
seed: when RLlib restarts a dead runner, the same worker index comes back with a new pid, and the seeds
the dead one had taken and never reported are `orphans`, run again; so are those of a runner the path
saw die (`runner_down`), at once, whether or not it ever comes back.

The dispenser itself may die (killed, OOM): Ray starts it again (max_restarts), empty, on the driver's
node, and calls to it wait for it and are retried. The pump notices the new incarnation and queues
again, first, every seed handed out and not yet recorded: the ones some env still runs then run twice,
and the path records only the first to finish.
"""

from __future__ import annotations

import collections
import os
import threading
import uuid
from typing import Any

from tui_eval.feed import FeedRelay, Heartbeat, HoldOrder, Seed

DISPENSER_PREFIX = "tui_eval_seeds_"
CONTROL_TIMEOUT_S = 2.0
TAKE_TIMEOUT_S = 10.0  # an env's reset waits this long for a restarting dispenser, then idles and asks again


class SeedDispenser:
    """A Ray actor (threaded): seeds in, one seed per env reset out."""

    def __init__(self) -> None:
        self._queue: collections.deque[Seed] = collections.deque()
        self._taken: dict[Seed, tuple[int, int]] = {}  # seed -> (worker index, pid) of the runner running it
        self._pids: dict[int, int] = {}  # worker index -> pid of its runner now
        self._lost: list[Seed] = []
        self._frozen: list[tuple[int, int, str, int]] = []  # (seed, block, why, worker index) of frozen steps
        self._lock = threading.Condition()
        self._holding = HoldOrder(self._lock)  # paused: queued seeds wait
        self.incarnation = uuid.uuid4().hex  # new when Ray restarts this actor: its state is gone

    def where(self) -> tuple[str, int]:
        """(incarnation, pid): which process serves the dispenser now."""
        return self.incarnation, os.getpid()

    def take(self, worker_index: int, pid: int) -> Seed | None:
        with self._lock:
            previous = self._pids.get(worker_index)
            if previous is not None and previous != pid:  # RLlib restarted this runner: the old one died
                self._lost += [s for s, (w, p) in self._taken.items() if (w, p) == (worker_index, previous)]
                for seed in self._lost:
                    self._taken.pop(seed, None)
            self._pids[worker_index] = pid
            if self._holding.held or not self._queue:
                self._lock.notify_all()
                return None
            seed = self._queue.popleft()
            self._taken[seed] = (worker_index, pid)
            self._lock.notify_all()
            return seed

    def offer(self, seeds: list[Seed], first: bool = False) -> None:
        with self._lock:
            if first:
                self._queue.extendleft(reversed(seeds))
            else:
                self._queue.extend(seeds)
            self._holding.offered()

    def wait_below(self, low: int, timeout: float) -> tuple[str, int]:
        """Wait until fewer than `low` seeds are queued (or `timeout`); (incarnation, the number queued)."""
        with self._lock:
            if len(self._queue) >= low:
                self._lock.wait(timeout)
            return self.incarnation, len(self._queue)

    def hold(self, control: int | None = None, offers_sent: int = 0) -> list[Seed]:
        """Pause: hand out nothing until `release`; the seeds queued now, handed back (`HoldOrder`: the pump's
        numbering of its calls, which this threaded actor may run out of order)."""
        with self._lock:
            if not self._holding.hold(control, offers_sent):
                return []
            unstarted, self._queue = list(self._queue), collections.deque()
            return unstarted

    def release(self, control: int | None = None) -> None:
        with self._lock:
            self._holding.release(control)

    def finished(self, seeds: list[Seed]) -> None:
        with self._lock:
            for seed in seeds:
                self._taken.pop(seed, None)

    def runner_down(self, worker_index: int) -> None:
        """The runner with this index died: the seeds it took are orphans now, not when (if) it is back."""
        with self._lock:
            pid = self._pids.pop(worker_index, None)
            lost = [s for s, (w, p) in self._taken.items() if w == worker_index and p == pid]
            for seed in lost:
                self._taken.pop(seed)
            self._lost += lost

    def froze(self, worker_index: int, seed: Seed, why: str) -> None:
        """A runner's step on `seed` never returned (its process ends next): that episode is invalid, not lost."""
        with self._lock:
            self._taken.pop(seed, None)
            self._frozen.append((seed[0], seed[1], why, worker_index))

    def orphans(self) -> tuple[list[Seed], list[tuple[int, int, str, int]]]:
        """Seeds taken by runners that have since been replaced, and the frozen steps (each reported once)."""
        with self._lock:
            (lost, self._lost), (frozen, self._frozen) = (self._lost, []), (self._frozen, [])
            return lost, frozen


class DispenserFeed:
    """The SeedFeed of an env in a remote evaluation runner: asks the dispenser at each reset."""

    heartbeat: Heartbeat | None = None
    cancelled = False

    def __init__(self, dispenser_name: str, worker_index: int, step_timeout: float | None = None):
        from tui_eval.integrations.rllib.paths.runner_watchdog import runner_heartbeat

        self._name = dispenser_name
        self._worker_index = worker_index
        self._handle: Any = None
        self.heartbeat = runner_heartbeat(step_timeout, dispenser_name, worker_index)

    def take(self) -> Seed | None:
        import ray

        try:
            if self._handle is None:
                self._handle = ray.get_actor(self._name)
            seed = ray.get(self._handle.take.remote(self._worker_index, os.getpid()), timeout=TAKE_TIMEOUT_S)
        except (ValueError, ray.exceptions.RayError):  # the dispenser is being restarted: idle, ask again
            self._handle = None
            return None
        return None if seed is None else (int(seed[0]), int(seed[1]))


class DispenserPump:
    """The driver's side: keeps a SeedDispenser topped up from the path's feed (a thread, while evaluate()
    runs), about `target` seeds queued: a few per remote runner."""

    def __init__(self, name: str, relay: FeedRelay, target: int):
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.name = name
        # On the driver's node: a node that leaves takes its runners, not the seeds of all of them.
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        actor: Any = ray.remote(SeedDispenser)
        self.handle: Any = actor.options(name=name, num_cpus=0, max_concurrency=64, max_restarts=-1,
                                         max_task_retries=-1, scheduling_strategy=here).remote()
        # asked now, waited for in `started`: the actor's process starts while the caller builds its runners
        self._where: Any = self.handle.where.remote()
        self.incarnation: str | None = None
        self.pid: int | None = None
        self.restarts = 0
        self.news: list[str] = []  # restarts, for the path to report (taken from its thread)
        self.frozen: dict[int, tuple[Seed, str]] = {}  # worker index -> the seed its frozen step ran, and why
        self._relay = relay
        self._target = target
        self._held = False
        self._handing = threading.Lock()  # a hold falls between two offers, never between a seed's take and offer
        self._offers_sent = 0  # to this incarnation: a hold tells it how many to wait for
        self._control = 0  # holds and releases are numbered: the dispenser ignores one run after a newer one
        self._late_holds: list[Any] = []  # holds not answered in time: the pump hands their seeds back later
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def started(self) -> None:
        """Wait for the dispenser's first process (once): its incarnation and pid."""
        import ray

        if self._where is not None:
            self.incarnation, self.pid = ray.get(self._where)
            self._where = None

    def start(self) -> None:
        self.started()
        self._stop.clear()
        self._thread = threading.Thread(target=self._pump, name=f"pump-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _pump(self) -> None:
        import ray

        while not self._stop.is_set():
            self._late_holds_answered()
            incarnation, queued = ray.get(self.handle.wait_below.remote(self._target // 2 + 1, 0.1))
            if incarnation != self.incarnation:
                self._restarted()
                continue
            seeds: list[Seed] = []
            with self._handing:
                while queued + len(seeds) < self._target:
                    seed = self._relay.take()
                    if seed is None:
                        break
                    seeds.append(seed)
                if seeds:
                    self._offer(seeds)
            if seeds:
                continue
            if queued >= self._target // 2 + 1 or self._relay.dry:
                self._stop.wait(0.02)

    def _restarted(self) -> None:
        """Ray restarted the dispenser, empty: every seed handed out and not recorded is queued again."""
        import ray

        dead = self.pid
        self.incarnation, self.pid = ray.get(self.handle.where.remote())
        self.restarts += 1
        with self._handing:
            self._offers_sent = 0  # the new incarnation has seen none
            if self._held:
                ray.get(self.handle.hold.remote(self._control, 0))
            again = sorted(self._relay.running_now())
            self._offer(again, True)
        self.news.append(f"the seed dispenser (pid {dead}) died and Ray restarted it (pid {self.pid}); the "
                         f"{len(again)} seed(s) handed out and not recorded run again (each recorded once)")

    def _offer(self, seeds: list[Seed], first: bool = False) -> None:
        self._offers_sent += 1
        self.handle.offer.remote(seeds, first)

    def hold(self) -> list[Seed]:
        """The seeds no env has taken yet, no longer running (the caller gives them back to the engine); those of
        an answer that comes late are given back by the pump, once it comes."""
        import ray

        with self._handing:
            self._held = True
            self._control += 1
            asked = self.handle.hold.remote(self._control, self._offers_sent)
        try:
            return self._unstarted(ray.get(asked, timeout=CONTROL_TIMEOUT_S))
        except ray.exceptions.GetTimeoutError:
            with self._handing:
                self._late_holds.append(asked)
        except ray.exceptions.RayError:  # being restarted: the pump holds the new one (nothing queued yet)
            pass
        return []

    def _unstarted(self, held: list[Seed]) -> list[Seed]:
        unstarted: list[Seed] = [(int(s), int(b)) for s, b in held]
        for seed in unstarted:
            self._relay.finish(seed)
        return unstarted

    def _late_holds_answered(self) -> None:
        import ray

        with self._handing:
            late, self._late_holds = self._late_holds, []
        if not late:
            return
        ready, waiting = ray.wait(late, num_returns=len(late), timeout=0)
        with self._handing:
            self._late_holds += waiting
        unstarted: list[Seed] = []
        for ref in ready:
            try:
                unstarted += self._unstarted(ray.get(ref))
            except ray.exceptions.RayError:  # the dispenser died with them: every seed not recorded runs again
                pass
        give_back = getattr(self._relay.feed, "give_back", None)
        if unstarted and give_back is not None:
            give_back(unstarted)

    def release(self) -> None:
        import ray

        with self._handing:
            self._held = False
            self._control += 1
            control = self._control
        try:
            ray.get(self.handle.release.remote(control), timeout=CONTROL_TIMEOUT_S)
        except ray.exceptions.RayError:  # being restarted: the new one starts released
            pass

    def finished(self, seeds: list[Seed]) -> None:
        self.handle.finished.remote(seeds)

    def runner_down(self, worker_index: int) -> None:
        import ray

        ray.get(self.handle.runner_down.remote(worker_index))  # before `reclaim` asks for the orphans

    def reclaim(self) -> list[Seed]:
        """Seeds of runners that died and were not recorded: queued again, first."""
        import ray

        orphans, frozen = ray.get(self.handle.orphans.remote())
        for seed, block, why, index in frozen:
            self.frozen[int(index)] = ((int(seed), int(block)), why)
        running = self._relay.running_now()
        lost = [(int(s), int(b)) for s, b in orphans if (int(s), int(b)) in running]
        if lost:
            with self._handing:
                self._offer(lost, True)
        return lost

    def close(self) -> None:
        import ray

        self.stop()
        try:
            ray.kill(self.handle, no_restart=True)
        except Exception:  # Ray already down
            pass
