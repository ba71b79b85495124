"""Both RLlib paths on real checkpoints, real Algorithm.evaluate(), real connector pipelines and envs."""

from __future__ import annotations

import pytest

from tests.support import fault_envs
from tests.support.common import CARTPOLE, PENDULUM
from tests.support.engines import by_seed, plan_for, run_to_end

EVALUATE_DEFAULT = "library default: RLlib's evaluation config (evaluation_config.explore)"
CONNECTORS_DEFAULT = "library default: RLlib's inference example (forward_inference, explore=False)"


@pytest.mark.parametrize("checkpoint", [CARTPOLE, PENDULUM], ids=["discrete-cartpole", "continuous-pendulum"])
def test_explore_off_gives_equal_returns_per_seed(checkpoint, tmp_path):
    engine, records = run_to_end(checkpoint, "--episodes", "10", "--num-envs", "4", "--seeds", "500:510",
                                 "--explore", "evaluate=off", "--explore", "connectors=off",
                                 log=tmp_path / "run.sqlite")
    evaluate, connectors = by_seed(records, "evaluate"), by_seed(records, "connectors")
    assert sorted(evaluate) == list(range(500, 510))
    assert sorted(connectors) == list(range(500, 510))
    assert evaluate == connectors
    assert not any(r.invalid for r in records)
    assert all(r.explore is False for r in records)
    comparison = engine.stats.comparison.summary()
    assert comparison.exact is True and comparison.verdict != "differ"


def test_library_defaults_are_shown_and_differ(tmp_path):
    plan = plan_for(CARTPOLE, "--episodes", "4", log=tmp_path / "run.sqlite")
    assert plan.explore == {"evaluate": True, "connectors": False}
    assert plan.explore_source == {"evaluate": EVALUATE_DEFAULT, "connectors": CONNECTORS_DEFAULT}
    assert plan.seeds.start >= 1_000_000_000 and "held out" in plan.seeds_note
    assert plan.facts["algorithm"] == "PPO" and plan.facts["env"] == "CartPole-v1 (Gymnasium registry)"


@pytest.mark.parametrize("env, reason", [
    ("tests.support.fault_envs:NanCartPole-v0", f"non-finite observation at step {fault_envs.BREAK_AT_STEP}"),
    ("tests.support.fault_envs:RaisingCartPole-v0", "RuntimeError: simulated physics blow-up"),
])
def test_broken_worlds_become_invalid_records_and_the_run_goes_on(env, reason, tmp_path):
    engine, records = run_to_end(CARTPOLE, "--env", env, "--episodes", "9", "--num-envs", "3",
                                 "--seeds", "300:309", "--explore", "evaluate=off", log=tmp_path / "run.sqlite")
    for path in ("evaluate", "connectors"):
        mine = [r for r in records if r.path == path]
        assert sorted(r.seed for r in mine) == list(range(300, 309)), path
        for rec in mine:
            if fault_envs.breaks(rec.seed):
                assert rec.invalid and reason in rec.reason, (path, rec)
                assert rec.success is not True
                assert rec.length == fault_envs.BREAK_AT_STEP
            else:
                assert not rec.invalid and rec.reason is None, (path, rec)
    assert engine.stats.paths["evaluate"].invalid == 3
    assert engine.stats.paths["connectors"].invalid == 3
    # the same worlds break on both paths, with the same partial returns
    assert by_seed(records, "evaluate") == by_seed(records, "connectors")


@pytest.mark.parametrize("checkpoint", [CARTPOLE, PENDULUM], ids=["discrete-cartpole", "continuous-pendulum"])
def test_fused_stock_pipelines_equal_the_generic_ones(checkpoint, tmp_path):
    """The batched stock pipelines give the same returns, seed by seed, as RLlib's per-step pipelines."""
    results = {}
    for generic in (False, True):
        flags = ["--generic-connectors"] if generic else []
        engine, records = run_to_end(checkpoint, "--paths", "connectors", "--episodes", "12", "--num-envs", "5",
                                     "--seeds", "70:82", *flags, log=tmp_path / f"run{generic}.sqlite")
        description = engine.paths["connectors"].description
        assert ("step by step" in description) == generic, description
        results[generic] = {r.seed: (r.ret, r.length) for r in records}
    assert sorted(results[False]) == list(range(70, 82))
    assert results[False] == results[True]


def test_evaluate_path_pauses_between_episodes_and_runs_every_seed_once(tmp_path):
    """evaluate() calls go on across pauses: episodes in flight finish, no new one starts while paused,
    and after resuming every seed of the block is run exactly once."""
    from tests.support.common import wait_until
    from tests.support.engines import plan_for
    from tui_eval.session import start_engine

    engine = start_engine(plan_for(CARTPOLE, "--paths", "evaluate", "--episodes", "24", "--num-envs", "4",
                                   "--seeds", "900:924", "--explore", "evaluate=off", log=tmp_path / "run.sqlite"))
    try:
        engine.start()
        wait_until(lambda: engine.log.count() >= 2, timeout=120)
        engine.pause()
        wait_until(lambda: not engine.in_flight("evaluate"), timeout=60)
        settled = engine.log.count()
        assert settled < 24
        import time

        time.sleep(1.5)
        assert engine.log.count() == settled  # nothing new starts while paused
        engine.resume()
        assert engine.wait(120)
    finally:
        engine.close()
    seeds = sorted(r.seed for r in engine.log.records())
    assert seeds == list(range(900, 924))
