"""An exact comparison needs an env that repeats itself from its reset seed: one that does not is found
before the run, said so, and its comparison is statistical (never `DIFFER (exact)` from the env's own noise)."""

from __future__ import annotations

import gymnasium as gym
from ray.rllib.examples.envs.classes.cartpole_with_dict_observation_space import CartPoleWithDictObservationSpace

from tests.support import fault_envs  # registers UnseededCartPole-v0 and the fault envs
from tests.support.common import CARTPOLE
from tests.support.engines import plan_for, run_to_end
from tui_eval.envs.seeding import NOT_CHECKED, check_seed_repeat
from tui_eval.log.store import RunLog
from tui_eval.views.summary import replay


def test_gymnasiums_cartpole_repeats_itself_and_an_unseeded_env_does_not():
    cartpole = check_seed_repeat(lambda: gym.make("CartPole-v1"), "CartPole-v1")
    assert cartpole.repeats is True and cartpole.draws == frozenset()
    assert check_seed_repeat(lambda: gym.make("Pendulum-v1"), "Pendulum-v1").repeats is True
    check = check_seed_repeat(lambda: gym.make("UnseededCartPole-v0"), "UnseededCartPole")
    assert check.repeats is False and "not a function of its reset seed" in check.line
    assert "observation at step" in check.line and "statistical, not exact" in check.line


def test_rllibs_dict_cartpole_repeats_itself_once_numpys_global_generator_follows_the_seed():
    """It draws a part of its observation with `np.random.randint`: tui-eval seeds that generator at each reset,
    and the probe sees the env draw from it (so each env of a vector keeps its own copy)."""
    check = check_seed_repeat(CartPoleWithDictObservationSpace, "CartPoleWithDictObservationSpace")
    assert check.repeats is True and check.draws == frozenset({"numpy"})


def test_a_faithful_env_keeps_the_exact_comparison(tmp_path):
    plan = plan_for(CARTPOLE, "--episodes", "2", "--paths", "connectors", log=tmp_path / "run.sqlite")
    assert plan.repeatable_seeds and plan.facts["env seeding"].startswith("repeats itself")


def test_an_unseeded_env_makes_the_comparison_statistical_live_and_read_back(tmp_path):
    log = tmp_path / "run.sqlite"
    args = ("--env", "UnseededCartPole-v0", "--paths", "connectors,evaluate", "--explore", "evaluate=off",
            "--episodes", "6", "--num-envs", "2")
    plan = plan_for(CARTPOLE, *args, log=tmp_path / "plan.sqlite")
    assert not plan.repeatable_seeds and "statistical, not exact" in plan.facts["env seeding"]
    engine, records = run_to_end(CARTPOLE, *args, log=log)
    assert {r.seed for r in records if r.path == "evaluate"} == {r.seed for r in records if r.path == "connectors"}
    live = engine.stats.comparison.summary()
    assert not live.exact and live.verdict != "differ"  # six noisy pairs decide nothing; one differing seed would
    back = replay(RunLog(log, readonly=True).meta(), RunLog(log, readonly=True).records()).comparison.summary()
    assert not back.exact and back.verdict == live.verdict


def test_a_simulator_that_hangs_is_not_judged_and_does_not_hold_the_run(monkeypatch):
    import tui_eval.envs.seeding as env_seeding

    monkeypatch.setattr(env_seeding, "PROBE_SECONDS", 1.0)
    # FreezingCartPole freezes at step 5 on seeds divisible by 3 (the probe seed is one) until RELEASE_FROZEN,
    # which tests of frozen worlds set at their end: clear it for this one, set it again after
    assert env_seeding.PROBE_SEED % 3 == 0
    fault_envs.RELEASE_FROZEN.clear()
    try:
        assert check_seed_repeat(lambda: gym.make("FreezingCartPole-v0"), "frozen") == NOT_CHECKED
    finally:
        fault_envs.RELEASE_FROZEN.set()
    raising = check_seed_repeat(lambda: gym.make("RaisingCartPole-v0"), "raising")
    assert raising.repeats is None and "raised" in raising.line
