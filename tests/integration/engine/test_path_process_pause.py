"""A pause reaches a path in a process of its own (the default placement) as it reaches a Ray worker: no episode
starts after it, and every seed the child had not started goes back to the run, also when the child answers late."""

from __future__ import annotations

import time

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
    try:
        engine.start()
        wait_until(lambda: engine.log.count() >= 50, timeout=120)
        engine.pause()
        wait_until(lambda: not engine.in_flight(), timeout=60)
        settled = engine.log.count()
        handed_back = [seed for seed, _ in engine._state[in_child[0]].retry]  # to run first after the resume
        assert handed_back, "the child had no seed waiting when paused"
        time.sleep(0.5)
        assert engine.log.count() == settled  # nothing starts while paused
        engine.resume()
        wait_until(lambda: engine.log.count() >= settled + 50, timeout=60)
    finally:
        engine.stop()
        engine.wait(60)
        engine.close()
    counts: dict[int, int] = {}
    for record in engine.log.records():
        if record.path == in_child[0]:
            counts[record.seed] = counts.get(record.seed, 0) + 1
    assert set(counts.values()) == {1}  # a seed handed back and run again is recorded once
    assert set(handed_back) <= set(counts)  # what was handed back ran after the resume
    assert set(range(max(handed_back))) <= set(counts)  # and nothing before it was skipped
