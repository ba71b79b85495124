"""Engine operations on scripted paths (tests/support/fake_path.py, a fake: no policy, no RLlib): pause,
resume, resample, stop, episode limits, a path that crashes and is loaded afresh, and the watchdog of a
step that never returns. The same operations on a real checkpoint: tests/integration/engine/."""

from __future__ import annotations

import threading

from tests.support.common import wait_until
from tests.support.engines import assert_frozen_worlds_replaced
from tests.support.fake_path import Script, fake_plan
from tui_eval.records import EpisodeFinished, PathFailed
from tui_eval.session import start_engine


def _engine(tmp_path, script: Script | None = None, **plan):
    return start_engine(fake_plan(tmp_path, {"connectors": script or Script()}, **plan))


def test_pause_resume_resample_stop(tmp_path):
    engine = _engine(tmp_path, seeds="100:")
    engine.episodes = None  # run until stopped, as the live app does
    try:
        engine.start()
        wait_until(lambda: engine.log.count() >= 3)
        engine.pause()
        assert engine.state == "paused"
        # episodes in flight finish (at most one per env), then nothing more
        wait_until(lambda: not engine.in_flight("connectors"), timeout=30)
        settled = engine.log.count()
        threading.Event().wait(0.5)
        assert engine.log.count() == settled
        engine.resume()
        wait_until(lambda: engine.log.count() >= settled + 2)
        block = engine.resample()
        assert block.start > 100 and engine.blocks[-1] == block
        wait_until(lambda: any(r.block == 1 for r in engine.log.records()))
        engine.stop()
        assert engine.wait(30)
        assert engine.state == "done"
        new = [r for r in engine.log.records() if r.block == 1]
        assert new and all(r.seed >= block.start for r in new)
        # the block's statistics hold exactly the block's records (read once every worker has finished)
        assert engine.block_stats.paths["connectors"].episodes == len(new)
    finally:
        engine.stop()
        engine.close()
    seeds = [r.seed for r in engine.log.records() if r.block == 0]
    assert sorted(seeds) == list(range(100, 100 + len(seeds)))


def test_episode_limit_is_exact_and_seeds_are_the_block(tmp_path):
    engine = _engine(tmp_path, episodes=5, seeds="40:60")
    engine.start()
    assert engine.wait(60)
    engine.close()
    assert sorted(r.seed for r in engine.log.records()) == [40, 41, 42, 43, 44]


def test_a_failed_path_is_loaded_afresh_and_its_episodes_in_flight_run_again(tmp_path):
    # the first run() call takes two seeds and raises, as a policy-side crash mid-episode would
    engine = _engine(tmp_path, Script(crash_on_runs=frozenset({1}), crash_after_taking=2), episodes=6, seeds="0:6")
    path = engine.paths["connectors"]
    events = []
    engine.subscribe(events.append)
    engine.start()
    assert engine.wait(60)
    engine.close()
    records = engine.log.records()
    assert sorted(r.seed for r in records) == list(range(6))  # the two seeds in flight ran again, once
    assert not any(r.invalid for r in records)  # a failed path is not a broken world
    failures = [e for e in events if isinstance(e, PathFailed)]
    assert len(failures) == 1 and not failures[0].gave_up
    assert failures[0].message == "RuntimeError: worker lost" and "Traceback" in failures[0].details
    assert engine.paths["connectors"] is not path and path.closed  # loaded afresh, the old one closed
    assert sum(isinstance(e, EpisodeFinished) for e in events) == 6


def test_a_step_that_never_returns_makes_an_invalid_episode_and_a_fresh_path(tmp_path):
    script = Script(num_envs=1, hang=frozenset({300, 303}))
    engine = _engine(tmp_path, script, episodes=5, seeds="300:305", step_timeout=1)
    events = []
    engine.subscribe(events.append)
    first_path = engine.paths["connectors"]
    try:
        engine.start()
        assert engine.wait(30), "the run hung on the frozen world"
    finally:
        script.release.set()  # let the abandoned threads finish
        engine.close()
    assert_frozen_worlds_replaced(engine, events, first_path, [300, 301, 302, 303, 304], [300, 303])
    assert script.built == 3  # rebuilt after each freeze


def test_two_paths_walk_the_same_seeds_and_a_slow_one_never_stalls_the_fast_one(tmp_path):
    slow, fast = Script(num_envs=1, step_s=0.02), Script(num_envs=2)
    engine = start_engine(fake_plan(tmp_path, {"slow": slow, "fast": fast}, seeds="0:", episodes=12))
    engine.start()
    try:
        wait_until(lambda: sum(r.path == "fast" for r in engine.log.records()) == 12, timeout=30)
        assert sum(r.path == "slow" for r in engine.log.records()) < 12  # the fast path did not wait
        assert engine.wait(30)
    finally:
        engine.close()
    seeds = {name: sorted(r.seed for r in engine.log.records() if r.path == name) for name in ("slow", "fast")}
    assert seeds["slow"] == seeds["fast"] == list(range(12))
