"""The `--step-timeout` watchdog inside a remote evaluation EnvRunner's process (the `evaluate` path with
`--workers`), as the engine's is in-process.

A step that never returns cannot be interrupted, and the runner's `sample()` with it: evaluate() would wait
for it up to RLlib's `evaluation_sample_timeout_s` on every call. So the runner's envs note their steps in
one Heartbeat per process; a thread watches it, and on a step that overruns tells the seed dispenser
which seed froze and why (that episode is recorded invalid, not run again) and ends the process. Ray then
restarts the runner, and the path brings it back as it does for any dead runner (eval_runners.py).
"""

from __future__ import annotations

import os
import threading
import time

from tui_eval.feed import Heartbeat

REPORT_TIMEOUT_S = 10.0
_heartbeat: Heartbeat | None = None
_lock = threading.Lock()


def runner_heartbeat(step_timeout: float | None, dispenser: str, worker_index: int) -> Heartbeat | None:
    """This process's heartbeat, its watchdog started with the first env (None: no step timeout)."""
    global _heartbeat
    if step_timeout is None or not _in_remote_worker():
        # The driver's own (local) evaluation runner builds these envs too, but runs no episode of the run;
        # a watchdog there would end the driver itself (the engine's watchdog covers in-process paths).
        return None
    with _lock:
        if _heartbeat is None:
            _heartbeat = Heartbeat()
            threading.Thread(target=_watch, args=(_heartbeat, step_timeout, dispenser, worker_index),
                             name="step-watchdog", daemon=True).start()
        return _heartbeat


def _in_remote_worker() -> bool:
    """True in a Ray worker process (a remote EnvRunner), False in the driver."""
    import ray

    try:
        return ray.is_initialized() and ray._private.worker.global_worker.mode == ray.WORKER_MODE
    except AttributeError:  # a Ray without these names: keep the watchdog off rather than risk the driver
        return False


def _watch(heartbeat: Heartbeat, timeout: float, dispenser: str, worker_index: int) -> None:
    while True:
        time.sleep(min(0.25, timeout / 4))
        oldest = heartbeat.oldest()
        if oldest is None or time.perf_counter() - oldest[0] <= timeout or oldest[1] is None:
            continue
        _report(dispenser, worker_index, (oldest[1], oldest[2]),
                f"a step did not return within --step-timeout {timeout:g}s (world frozen)")
        os._exit(1)  # the stuck step holds the runner: Ray starts a fresh one


def _report(dispenser: str, worker_index: int, seed: tuple[int, int], why: str) -> None:
    import ray

    try:
        ray.get(ray.get_actor(dispenser).froze.remote(worker_index, seed, why), timeout=REPORT_TIMEOUT_S)
    except Exception:  # the dispenser is gone too: the seed then runs again, as a lost one
        pass
