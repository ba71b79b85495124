"""The engine on a real checkpoint (the `connectors` path, no ray needed) and a real env whose step never
returns: the watchdog notices it through the env's own heartbeat and loads the real path afresh. Pause,
resume, resample, stop, episode limits and a crashing path run on scripted paths: tests/unit/test_engine_schedule.py."""

from __future__ import annotations

from tests.support.common import CARTPOLE
from tests.support.engines import assert_frozen_worlds_replaced, plan_for
from tui_eval.session import start_engine


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
    assert_frozen_worlds_replaced(engine, events, first_path, [300, 301, 302, 303, 304], [300, 303])
