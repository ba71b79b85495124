"""Engine operations on a real checkpoint (the `connectors` path, no ray needed): pause, resume,
resample, stop, episode limits, and a worker that dies."""

from __future__ import annotations

import threading

from tests.support.common import CARTPOLE, wait_until
from tests.support.engines import plan_for
from tui_eval.events import EpisodeFinished, PathFailed
from tui_eval.session import start_engine


def _engine(tmp_path, *args):
    return start_engine(plan_for(CARTPOLE, "--paths", "connectors", "--num-envs", "2", *args,
                                 log=tmp_path / "run.sqlite"))


def test_pause_resume_resample_stop(tmp_path):
    engine = _engine(tmp_path, "--seeds", "100:")
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
    engine = _engine(tmp_path, "--episodes", "5", "--seeds", "40:60")
    engine.start()
    assert engine.wait(60)
    engine.close()
    assert sorted(r.seed for r in engine.log.records()) == [40, 41, 42, 43, 44]


def test_a_failed_path_is_loaded_afresh_and_its_episodes_in_flight_run_again(tmp_path):
    engine = _engine(tmp_path, "--episodes", "6", "--seeds", "0:6")
    path = engine.paths["connectors"]
    real_run = path.run
    calls = []

    def run_that_dies_once(feed, emit):
        # Fault injection: a policy-side crash mid-episode on a path that is otherwise fine cannot be
        # caused through a real module, so the first call takes two seeds and raises.
        calls.append(1)
        if len(calls) == 1:
            feed.take(), feed.take()
            raise RuntimeError("worker lost")
        return real_run(feed, emit)

    path.run = run_that_dies_once
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
    assert engine.paths["connectors"] is not path  # loaded afresh
    assert sum(isinstance(e, EpisodeFinished) for e in events) == 6


def test_a_step_that_never_returns_makes_an_invalid_episode_and_a_fresh_path(tmp_path):
    from tests.support import fault_envs

    engine = start_engine(plan_for(CARTPOLE, "--paths", "connectors", "--num-envs", "1", "--episodes", "5",
                                   "--seeds", "300:305", "--env", "tests.support.fault_envs:FreezingCartPole-v0",
                                   "--step-timeout", "1", log=tmp_path / "run.sqlite"))
    events = []
    engine.subscribe(events.append)
    first_path = engine.paths["connectors"]
    try:
        engine.start()
        assert engine.wait(90), "the run hung on the frozen world"
    finally:
        fault_envs.RELEASE_FROZEN.set()  # let the abandoned thread finish
        engine.close()
    records = engine.log.records()
    assert sorted(r.seed for r in records) == [300, 301, 302, 303, 304]
    frozen = sorted(r.seed for r in records if r.invalid)
    assert frozen == [300, 303]
    assert all("did not return within --step-timeout 1s" in r.reason for r in records if r.invalid)
    assert engine.paths["connectors"] is not first_path  # rebuilt
    failures = [e for e in events if isinstance(e, PathFailed)]
    assert len(failures) == 2 and all("loaded afresh" in f.message for f in failures)
