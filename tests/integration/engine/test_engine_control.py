"""The engine on a real checkpoint (the `connectors` path, no ray needed) and a real env whose step never
returns: the watchdog notices it through the env's own heartbeat and loads the real path afresh; resample and the
live explore toggle on a real path in a process of its own (on Ray workers: tests/integration/cluster/). Pause,
resume, stop, episode limits and a crashing path run on scripted paths: tests/unit/test_engine_schedule.py."""

from __future__ import annotations

from tests.support.common import CARTPOLE
from tests.support.engines import (
    assert_frozen_worlds_replaced,
    assert_resampled_and_explored,
    plan_for,
    resample_then_explore,
)
from tui_eval.envs import seeding
from tui_eval.session import start_engine


def test_a_step_that_never_returns_makes_an_invalid_episode_and_a_fresh_path(tmp_path, monkeypatch):
    from tests.support import fault_envs

    # the plan's seed probe (tui_eval/envs/seeding.py) plays the probe seed, which freezes too: it would wait its
    # full 5 s for it (that wait is tested in tests/integration/rllib/test_env_seeding.py)
    monkeypatch.setattr(seeding, "PROBE_SECONDS", 0.5)
    fault_envs.RELEASE_FROZEN.clear()  # an earlier test may have released the frozen worlds
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
    assert_frozen_worlds_replaced(engine, events, first_path, [300, 301, 302, 303, 304], [300, 303])


def test_resample_and_explore_on_reach_a_real_path_in_its_own_process(tmp_path):
    # two paths: `evaluate` runs in the run's process, `connectors` in a process of its own
    engine = start_engine(plan_for(CARTPOLE, "--paths", "connectors,evaluate", "--explore", "evaluate=off", "--seeds",
                                   "0:", "--num-envs", "2", log=tmp_path / "run.sqlite", own_processes=True))
    engine.episodes = None  # as the live app: until stopped
    path = engine.paths["connectors"]
    assert "in a process of its own" in path.description and not path.explore
    try:
        engine.start()
        result = resample_then_explore(engine)
    finally:
        engine.stop()
        engine.close()
    assert engine.paths["connectors"] is path  # the same process all along: explore changed, not reloaded
    assert_resampled_and_explored(result)
    evaluate = {(r.block, r.seed): r.ret for r in result["records"] if r.path == "evaluate"}
    # until explore was turned on, the two deterministic paths played the same episodes
    assert all(evaluate[r.block, r.seed] == r.ret for r in result["records"]
               if r.path == "connectors" and r.block < 2 and (r.block, r.seed) in evaluate)
