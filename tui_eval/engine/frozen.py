"""The engine's watchdog for frozen worlds: a step that never returns cannot be interrupted, so its episode is
recorded invalid, its worker abandoned and the path loaded afresh (`--step-timeout`). In-process paths only: a
path in a process or actor of its own watches its own steps. `engine` is the `tui_eval.engine.core.Engine` (not
imported: it imports this module)."""

from __future__ import annotations

import time
from typing import Any

from tui_eval.records import EpisodeRecord


def watch_for_frozen_steps(engine: Any) -> None:
    """A step that never returns cannot be interrupted; abandon its worker and start a fresh path."""
    timeout = engine.step_timeout
    assert timeout is not None  # the watchdog runs only with a step timeout
    while not engine._all_done.is_set() and not engine._stopping:
        time.sleep(min(0.25, timeout / 4))
        for name, state in engine._state.items():
            ident = state.worker_ident
            stepping = engine.heartbeat.stepping(ident) if ident is not None else None
            if stepping is not None and time.perf_counter() - stepping[0] > timeout:
                replace_frozen(engine, name, stepping[1], stepping[2])

def replace_frozen(engine: Any, name: str, seed: int | None, block: int) -> None:
    """The frozen world's episode is invalid; the path's other episodes in flight run again."""
    frozen = engine.paths[name]
    state = engine._state[name]
    with engine._lock:
        state.generation += 1
        state.worker_ident = None
        frozen_key = (seed, block) if seed is not None and (seed, block) in state.in_flight else None
        if frozen_key is not None:
            state.in_flight.discard(frozen_key)
    reason = f"a step did not return within --step-timeout {engine.step_timeout:g}s (world frozen)"
    if frozen_key is not None and not engine._stopping:
        engine._emit(EpisodeRecord(path=name, seed=frozen_key[0], ret=0.0, length=0, success=False, invalid=True,
                                 reason=reason, block=block, explore=frozen.explore))
    if engine._rebuild is None:  # its worker is stuck inside the env: the path cannot go on
        engine._requeue_in_flight(name)
        gave_up = engine._report_failure(name, reason, "", give_up=True)
    else:  # a stuck step may hold the env's locks: the frozen path is left as it is, not closed
        gave_up = engine._path_failed(name, frozen, f"{reason}; the path is loaded afresh", close_old=False)
    if gave_up or engine._stopping:
        engine._finish(name)
        return
    engine._start_worker(name)
