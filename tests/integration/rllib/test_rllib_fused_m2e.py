"""The fused stock module-to-env pipeline returns what RLlib's returns, column by column, on every step of
real episodes (discrete and squashed continuous actions, Dict and Tuple actions of a Discrete and a Box,
explore off and on)."""

from __future__ import annotations

import pytest

from tests.support.common import CARTPOLE, PENDULUM
from tests.support.m2e_checks import differences, run_side_by_side


@pytest.mark.parametrize("checkpoint", [CARTPOLE, PENDULUM], ids=["discrete-cartpole", "continuous-pendulum"])
@pytest.mark.parametrize("explore", [False, True], ids=["explore-off", "explore-on"])
def test_fused_module_to_env_equals_the_pipeline_on_every_step(checkpoint, explore):
    both = run_side_by_side(checkpoint, explore, seeds=range(20, 23))  # the demo policies play long episodes
    assert both.calls > 20
    assert both.found == []


@pytest.mark.parametrize("name", ["dict_act", "multibinary_obs_tuple_act"], ids=["dict", "tuple"])
@pytest.mark.parametrize("explore", [False, True], ids=["explore-off", "explore-on"])
def test_fused_module_to_env_equals_the_pipeline_on_structured_actions(connector_zoo, name, explore):
    both = run_side_by_side(connector_zoo / name, explore, seeds=range(20, 24))
    assert both.calls > 5
    assert both.found == []


def test_a_difference_is_seen():
    import numpy as np

    real = {"actions": np.array([0, 1]), "action_logp": [np.float32(0.0), np.float32(0.0)]}
    assert differences(real, dict(real)) == []
    assert differences({**real, "actions": np.array([0, 0])}, real)
    assert differences({**real, "action_logp": [np.array(0.0, np.float32), np.float32(0.0)]}, real)  # a 0-d array
    assert differences({"actions": real["actions"]}, real)
    from collections import OrderedDict

    push, strength = np.array([0, 1]), np.zeros((2, 1), np.float32)
    structured = {"actions": OrderedDict([("push", push), ("strength", strength)])}
    assert differences(structured, {"actions": OrderedDict([("push", push), ("strength", strength)])}) == []
    assert differences(structured, {"actions": {"push": push, "strength": strength}})  # a dict of another type
    assert differences(structured, {"actions": OrderedDict([("strength", strength), ("push", push)])})  # key order
    assert differences({"actions": (push, strength)}, {"actions": [push, strength]})


def test_to_numpy_is_rllibs_convert_to_numpy():
    import torch
    from ray.rllib.utils.numpy import convert_to_numpy

    from tui_eval.integrations.rllib.paths.fused_m2e import to_numpy

    batch = {"f64": torch.ones(3, dtype=torch.float64), "i64": torch.arange(3), "f32": torch.rand(3, 2),
             "u8": torch.ones(3, dtype=torch.uint8), "bool": torch.ones(3, dtype=torch.bool),
             "scalar": torch.tensor(2.5), "nested": {"h": torch.zeros(3, 4, dtype=torch.float64)}}
    assert differences(to_numpy(batch), convert_to_numpy(batch)) == []
