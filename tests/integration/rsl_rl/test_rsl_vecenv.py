"""Worlds that break, and user VecEnvs plugged in with --vecenv."""

from __future__ import annotations

import pytest

from tests.support.rsl import ListFeed, demo_checkpoint, run_path
from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput
from tui_eval.integrations.rsl_rl.kind import RslRlKind
from tui_eval.integrations.rsl_rl.paths.vecenv import GymVecEnv


def kind_for(vecenv: str | None = None, **spec):
    ckpt = demo_checkpoint()
    return RslRlKind(ckpt, RunSpec(checkpoint=str(ckpt), kind_options={"vecenv": vecenv} if vecenv else {}, **spec))


def test_a_world_that_produces_nan_is_invalid_and_the_rest_finish():
    kind = kind_for(env_id="NanPointGoal-v0", num_envs=4)  # even seeds: NaN observation at step 3
    path = kind.build_path("jit", False)
    try:
        records = run_path(path, range(100, 112))
    finally:
        path.close()
    assert sorted(r.seed for r in records) == list(range(100, 112))
    for r in records:
        if r.seed % 2 == 0 and r.length >= 3:
            assert r.invalid and r.success is False and "non-finite observation at step 3" in r.reason
        else:
            assert not r.invalid and r.reason is None
    assert sum(r.invalid for r in records) >= 3 and sum(not r.invalid for r in records) == 6


def test_idle_worlds_record_nothing():
    env = GymVecEnv("PointGoal-v0", {}, 5, "cpu")
    env.begin(ListFeed([1, 2]))
    assert env.live.tolist() == [True, True, False, False, False]
    import torch

    ends = []
    while env.busy:
        env.step(torch.zeros(5, 2))
        ends += env.finished
    assert sorted(e.seed for e in ends) == [1, 2] and {e.world for e in ends} == {0, 1}


def test_vecenv_factory_runs_end_to_end():
    kind = kind_for(vecenv="tests.support.rsl:make_vecenv", num_envs=4)
    assert "--vecenv" in kind.describe()["env"]
    results = {}
    for name in ("runner", "jit"):
        path = kind.build_path(name, False)
        try:
            records = run_path(path, range(300, 316))
        finally:
            path.close()
        assert sorted(r.seed for r in records) == list(range(300, 316))
        assert not any(r.invalid for r in records)
        results[name] = {r.seed: (r.ret, r.length, r.success) for r in records}
    assert results["runner"] == results["jit"]  # same seed, same sim, same actions
    assert sum(s for _, _, s in results["runner"].values()) > 8


def test_vecenv_nan_world_and_exception_are_invalid():
    kind = kind_for(vecenv="tests.support.rsl:make_vecenv", num_envs=3, env_config={"nan_world": 1, "raise_at": 40})
    path = kind.build_path("runner", False)
    try:
        records = run_path(path, range(400, 415))
        assert path.env.rebuilds == 1
    finally:
        path.close()
    assert sorted(r.seed for r in records) == list(range(400, 415))
    reasons = [r.reason for r in records if r.invalid]
    assert any("non-finite reward at step 3" in r for r in reasons)
    raised = [r for r in reasons if "simulated physics failure" in r]
    assert 1 <= len(raised) <= 3 and all(r.startswith("env raised at step") for r in raised)
    assert any(not r.invalid and r.success for r in records)
    assert all(r.success is False for r in records if r.invalid)


def test_bad_vecenv_is_bad_input():
    with pytest.raises(BadInput, match="module:function"):
        kind_for(vecenv="no_colon_here").build_path("runner", False)
    with pytest.raises(BadInput, match="cannot import"):
        kind_for(vecenv="no_such_module_xyz:make").build_path("runner", False)
