"""The headless progress line on a real frozen world (a real CartPole whose step blocks, the real
`connectors` path): the line says what the path's real vector env is doing. On a scripted path:
tests/unit/test_stall.py."""

from __future__ import annotations

import pytest

from tests.support.common import CARTPOLE
from tests.support.engines import headless_until_silent, plan_for
from tui_eval.engine import stall
from tui_eval.envs import seeding
from tui_eval.runtime import headless_run
from tui_eval.session import start_engine


def test_the_headless_progress_line_names_a_path_stuck_in_a_frozen_world(tmp_path, monkeypatch):
    from tests.support import fault_envs

    monkeypatch.setattr(stall, "MIN_SILENCE_S", 1.0)
    # the plan's seed probe plays the probe seed, which freezes too: it would wait its full 5 s for it (that wait
    # is tested in tests/integration/rllib/test_env_seeding.py)
    monkeypatch.setattr(seeding, "PROBE_SECONDS", 0.5)
    monkeypatch.setitem(headless_run.DRAW_EVERY_S, False, 0.5)  # the line that says it comes soon after the 1 s
    fault_envs.RELEASE_FROZEN.clear()  # seed 303 freezes at step 5 until released
    engine = start_engine(plan_for(CARTPOLE, "--paths", "connectors", "--num-envs", "1", "--seeds", "301:305",
                                   "--env", "tests.support.fault_envs:FreezingCartPole-v0", "--step-timeout", "600",
                                   log=tmp_path / "run.sqlite"))
    _, err = headless_until_silent(engine, fault_envs.RELEASE_FROZEN)
    line = next(x for x in err.splitlines() if "no episode for" in x)
    assert "(1 episode in flight, 5 env steps into them (longest 5))" in line, line
    assert "connectors 4/4" in err.splitlines()[-1]  # released: the run then finishes


@pytest.fixture(autouse=True)
def _release_frozen_worlds():
    yield
    from tests.support import fault_envs

    fault_envs.RELEASE_FROZEN.set()
