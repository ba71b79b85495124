"""A pause reaches a path in a process of its own (the default placement) as it reaches a Ray worker: no episode
starts after it, and every seed the child had not started goes back to the run, also when the child answers late."""

from __future__ import annotations

import time
from collections import Counter

from tests.support.common import wait_until
from tests.support.engines import plan_for
from tests.support.rsl import demo_checkpoint
from tui_eval.isolation import process_path
from tui_eval.isolation.process_path import ProcessPath
from tui_eval.session import start_engine


def test_a_pause_answered_after_the_run_stopped_waiting_still_hands_back_the_unstarted_seeds(tmp_path, monkeypatch):
    """The child's answer to the hold always comes late here (the run waits 0 s for it, as a loaded machine
    can make it wait past its limit): its unstarted seeds are handed back by the run loop once it comes, so
    nothing stays in flight while paused, and they run after the resume."""
    monkeypatch.setattr(process_path, "HOLD_S", 0.0)
    engine = start_engine(plan_for(demo_checkpoint(), "--seeds", "0:", "--num-envs", "8", log=tmp_path / "run.sqlite",
                                   own_processes=True))
    engine.episodes = None  # as the live app: until stopped
    in_child = [name for name, path in engine.paths.items() if isinstance(path, ProcessPath)]
    assert len(in_child) == 1, engine.paths
    handed_back: list[int] = []
    try:
        engine.start()
        for _ in range(5):  # a pause that finds no seed waiting in the child (it just started them all) proves nothing
            handed_back += _pause_and_resume(engine, in_child[0])
            if handed_back:
                break
        assert handed_back, "the child had no seed waiting at any of 5 pauses"
    finally:
        engine.stop()
        engine.wait(60)
        engine.close()
    counts = Counter(record.seed for record in engine.log.records() if record.path == in_child[0])
    assert set(counts.values()) == {1}  # a seed handed back and run again is recorded once
    assert set(range(max(handed_back))) <= set(counts)  # nothing before the last seed handed back was skipped


def _pause_and_resume(engine, name: str) -> list[int]:
    """Pause the run: nothing in flight once the episodes under way are recorded, nothing starts while paused; then
    resume it and wait until the seeds the path `name` handed back are recorded. Those seeds."""
    def recorded() -> set[int]:
        return {record.seed for record in engine.log.records() if record.path == name}

    seen = len(recorded())
    wait_until(lambda: len(recorded()) >= seen + 20, timeout=120)
    engine.pause()
    wait_until(lambda: not engine.in_flight(), timeout=60)
    settled = engine.log.count()
    handed_back = [seed for seed, _ in engine._state[name].retry]  # to run first after the resume
    time.sleep(0.5)
    assert engine.log.count() == settled  # nothing starts while paused
    engine.resume()
    wait_until(lambda: set(handed_back) <= recorded(), timeout=60)
    return handed_back
