"""A path served from a process of its own: the Ray actor of a cluster node (`--workers`), and the host of a path
in its own local process (tui_eval/isolation/child.py).

It builds the path exactly as the run would in-process (the user's imports, `load_kind(spec)`,
`kind.build_path(name, explore)`), then runs `path.run` in a thread of its own on seeds from a small
local queue that the driver keeps topped up (`offer`). Finished records wait in an outbox that the
driver long-polls (`poll`). `hold` empties the queue and returns the seeds that never started: a seed
leaves the queue only when an env takes it, so each seed is either started here (and will be recorded)
or handed back, never both. The actor is threaded (`max_concurrency`) so that offer, poll and hold are
answered while episodes run.

With `--step-timeout`, the actor watches its own env steps as the engine does in-process: a step that
does not return in time is reported by the next poll (`frozen`: its seed, block and why); the driver
records that episode invalid and replaces the actor, whose episode thread is stuck for good.
"""

from __future__ import annotations

import collections
import os
import socket
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.errors import first_line
from tui_eval.feed import Heartbeat, HoldOrder, Seed
from tui_eval.paths.base import episodes_at_once
from tui_eval.records import EpisodeRecord


class _QueueFeed:
    """The SeedFeed of the path inside the actor: seeds from the driver's offers, in order."""

    def __init__(self, owner: PathWorker):
        self._owner = owner
        self.heartbeat = owner._heartbeat  # the actor's own watchdog reads it (None: no --step-timeout)
        self.frames = owner.frames  # the path's frame tap in this process (a path process relays it), or None

    def take(self) -> Seed | None:
        return self._owner._take()

    @property
    def cancelled(self) -> bool:
        return self._owner._cancelled


def prepare_process(spec: RunSpec, driver_cwd: str, threads: int, keep_apart: tuple[str, ...] = (),
                    in_ray: bool = True) -> Any:
    """Make this process (a Ray actor, a path's own process) ready to build the run's paths as the run's process would:
    the generators kept apart, the user's modules found and imported, torch's threads; returns the checkpoint's kind."""
    from tui_eval.envs import global_rng

    global_rng.keep_apart(keep_apart)  # as the driver's seed probe found (before any env is built)
    if os.path.isdir(driver_cwd) and driver_cwd not in sys.path:  # the user's modules, as on the driver
        sys.path.insert(0, driver_cwd)
    if not Path(spec.checkpoint).expanduser().exists():
        raise FileNotFoundError(f"checkpoint {spec.checkpoint} is not readable on node {socket.gethostname()}: "
                                "put it on a filesystem every node mounts at the same path")
    from tui_eval.kinds import load_kind
    from tui_eval.user.code import import_user_code

    for item in spec.imports:
        import_user_code(item)
    if spec.device.startswith("cuda"):
        if in_ray:
            spec.device = "cuda"  # Ray points CUDA_VISIBLE_DEVICES at this actor's GPU
    else:
        import torch

        torch.set_num_threads(max(1, threads))
    return load_kind(spec)


class PathWorker:
    def __init__(self, spec: RunSpec, name: str, explore: bool, driver_cwd: str, threads: int,
                 keep_apart: tuple[str, ...] = (), frames: Any = None, in_ray: bool = True):
        self.frames = frames
        self.path = prepare_process(spec, driver_cwd, threads, keep_apart, in_ray).build_path(name, explore)
        self._lock = threading.Condition()
        self._queue: collections.deque[Seed] = collections.deque()
        self._outbox: list[EpisodeRecord] = []
        self._running: set[Seed] = set()
        self._error: tuple[str, str] | None = None
        self._cancelled = False
        self._holding = HoldOrder(self._lock)  # paused: queued seeds wait, nothing starts
        self._closed = False
        self._idle = threading.Event()
        self._idle.set()
        self._step_timeout = spec.step_timeout
        self._heartbeat = Heartbeat() if spec.step_timeout is not None else None
        self._frozen: tuple[int, int, str] | None = None  # (seed, block, why) of a step that never returned
        #: called in the episode thread after each record with the seeds running and those queued, in place of
        #: waking a `poll` (a path process sends its records from there: tui_eval/isolation/pace.py)
        self.on_record: Callable[[int, int], None] | None = None
        loop = threading.Thread(target=self._loop, name=f"worker-{name}", daemon=True)
        loop.start()
        if self._heartbeat is not None:
            threading.Thread(target=self._watch, args=(loop.ident,), name="watchdog", daemon=True).start()

    # ------------------------------------------------------------------ driver's calls
    def placement(self) -> dict[str, Any]:
        import ray

        import tui_eval

        context = ray.get_runtime_context()
        return {"node": context.get_node_id(), "host": socket.gethostname(), "pid": os.getpid(),
                "gpus": [str(g) for g in ray.get_gpu_ids()], "description": self.path.description,
                "capacity": episodes_at_once(self.path), "package": tui_eval.__file__}

    def offer(self, seeds: list[Seed]) -> None:
        with self._lock:
            self._queue.extend(seeds)
            self._holding.offered()
            self._cancelled = False
            self._lock.notify_all()

    def poll(self, timeout: float) -> tuple[list[EpisodeRecord], tuple[str, str] | None, tuple[int, int, str] | None]:
        """Records finished since the last poll (waits up to `timeout` for one), the path's error if it
        failed, and the frozen step if one never returned (either way the actor is done for; the driver
        replaces it)."""
        with self._lock:
            if not self._outbox and self._error is None and self._frozen is None:
                self._lock.wait(timeout)
            records, self._outbox = self._outbox, []
            return records, self._error, self._frozen

    def hold(self, control: int | None = None, offers_sent: int = 0) -> list[Seed]:
        """Start nothing more until `release`: the seeds not started yet, handed back (`HoldOrder`: the
        driver's numbering of its calls, which a threaded actor may run out of order)."""
        with self._lock:
            if not self._holding.hold(control, offers_sent):
                return []
            unstarted, self._queue = list(self._queue), collections.deque()
            return unstarted

    def release(self, control: int | None = None) -> None:
        with self._lock:
            self._holding.release(control)

    def set_explore(self, explore: bool) -> None:
        self._idle.wait()  # between episodes: the driver has seen every record before it changes explore
        self.path.set_explore(explore)

    def cancel(self) -> None:
        """Stop: episodes in flight are abandoned, queued seeds dropped."""
        with self._lock:
            self._cancelled = True
            self._queue.clear()
            self._lock.notify_all()

    def close(self) -> None:
        self.cancel()
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self.path.close()

    # ------------------------------------------------------------------ inside the actor
    def _take(self) -> Seed | None:
        with self._lock:
            if self._cancelled or self._holding.held or not self._queue:
                return None
            seed = self._queue.popleft()
            self._running.add(seed)
            return seed

    def _emit(self, record: EpisodeRecord) -> None:
        with self._lock:
            self._running.discard((record.seed, record.block))
            self._outbox.append(record)
            if self.on_record is None:
                self._lock.notify_all()
                return
            running, queued = len(self._running), len(self._queue)  # read here: one lock a record
        self.on_record(running, queued)

    def _watch(self, loop_thread: int) -> None:
        """The engine's watchdog, inside the actor: note a step in the episode thread that overran."""
        import time

        assert self._heartbeat is not None and self._step_timeout is not None
        timeout = self._step_timeout
        while not self._closed and self._frozen is None:
            time.sleep(min(0.25, timeout / 4))
            stepping = self._heartbeat.stepping(loop_thread)
            if stepping is not None and time.perf_counter() - stepping[0] > timeout:
                with self._lock:  # seed -1: all the actor's worlds step at once, none to blame
                    why = f"a step did not return within --step-timeout {timeout:g}s (world frozen)"
                    self._frozen = (-1 if stepping[1] is None else int(stepping[1]), int(stepping[2]), why)
                    self._lock.notify_all()

    def _loop(self) -> None:
        feed = _QueueFeed(self)
        while True:
            with self._lock:
                while (self._holding.held or not self._queue) and not self._closed:
                    self._lock.wait()
                if self._closed:
                    return
                self._idle.clear()
            try:
                self.path.run(feed, self._emit)
            except Exception as exc:  # the policy side failed: the driver replaces this actor, seeds run again
                with self._lock:
                    self._error = (first_line(exc), traceback.format_exc())
                    self._lock.notify_all()
                return
            finally:
                self._idle.set()
