"""A policy fed other observations (the check, the doctor) runs the path's own pipelines where every piece is one of
RLlib's stock pieces, which keep nothing between calls, and copies of them where a piece may keep something (a
MeanStdFilter's statistics): the path is left as it was either way, and the actions are those of a copy."""

from __future__ import annotations

import copy

import numpy as np

from tests.support.common import CARTPOLE
from tui_eval.config.spec import RunSpec
from tui_eval.integrations.rllib.kind import RllibKind
from tui_eval.integrations.rllib.paths.rerun import pipelines_as_they_stand

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
