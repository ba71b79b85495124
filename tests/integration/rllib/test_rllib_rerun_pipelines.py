"""A policy fed other observations (the check, the doctor) runs the path's own pipelines where every piece is one of
RLlib's stock pieces, which keep nothing between calls, and copies of them where a piece may keep something (a
MeanStdFilter's statistics): the path is left as it was either way, and the actions are those of a copy."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from tests.support.common import CARTPOLE, PENDULUM
from tui_eval.config.spec import RunSpec
from tui_eval.integrations.rllib.kind import RllibKind
from tui_eval.integrations.rllib.paths.rerun import pipelines_as_they_stand
from tui_eval.paths.rerun import run_policy

SEED = 31


def _connectors_path(checkpoint):
    kind = RllibKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=2))
    return kind.build_path("connectors", explore=False)


def _actions_of_copies(path, side, observations) -> list:
    """The head's actions with deep copies of the pipelines made for every call (what it did before)."""
    e2m, m2e = path.env_to_module, path.module_to_env
    actions = []
    for z in observations:
        path.env_to_module, path.module_to_env = copy.deepcopy(e2m), copy.deepcopy(m2e)
        fresh = path.rerun(side.trace)
        actions.append(np.asarray(fresh.head(z)))
    path.env_to_module, path.module_to_env = e2m, m2e
    return actions


def test_stock_pipelines_serve_as_they_stand_and_give_a_copys_actions():
    path = _connectors_path(CARTPOLE)
    try:
        own = (path.env_to_module, path.module_to_env)
        assert pipelines_as_they_stand(*own)() == own
        trace = path.replay(SEED)
        side = path.rerun(trace)
        observations = trace.stages["obs"][:30]
        assert len(observations) == 30
        fed = [np.asarray(side.head(z)).tolist() for z in observations]
        assert fed == [a.tolist() for a in _actions_of_copies(path, side, observations)]
        assert fed == [np.asarray(a).tolist() for a in trace.env_actions[:30]]
    finally:
        path.close()


def test_a_pipeline_with_a_filter_is_copied_for_every_call_and_left_as_it_was(connector_zoo):
    path = _connectors_path(connector_zoo / "meanstd")
    try:
        e2m, m2e = pipelines_as_they_stand(path.env_to_module, path.module_to_env)()
        assert e2m is not path.env_to_module and m2e is not path.module_to_env
        before = copy.deepcopy(path.env_to_module.get_state())
        side = path.rerun(path.replay(SEED))
        z = side.trace.stages["obs"][3]
        first, second = np.asarray(side.head(z)), np.asarray(side.head(z))
        assert first.tolist() == second.tolist()  # no statistics carried from the first call into the second
        after = path.env_to_module.get_state()
        assert str(after) == str(before)
    finally:
        path.close()


@pytest.mark.parametrize("checkpoint", [CARTPOLE, PENDULUM], ids=["discrete", "continuous"])
def test_a_pure_policy_fed_a_whole_episode_at_once_gives_the_actions_of_one_step_at_a_time(checkpoint):
    """The check feeds a stateless policy the other path's observations in batched calls (one pipeline call for many
    one-step episodes, the forward row by row): the very same actions, in order, as fed one by one."""
    path = _connectors_path(checkpoint)
    try:
        side = path.rerun(path.replay(SEED))
        assert side.stateless and side.stepper().many is not None
        observations = side.trace.stages["obs"]
        assert len(observations) >= 50
        batched = run_policy(side.stepper, [], observations, batched=True)
        one_by_one = run_policy(side.stepper, [], observations)
        assert len(batched) == len(one_by_one) == len(observations)
        for got, want in zip(batched, one_by_one):
            assert got.shape == want.shape and np.array_equal(got, want)
        assert not all(np.array_equal(one_by_one[0], a) for a in one_by_one)  # the actions vary: order is tested
    finally:
        path.close()
