"""The batched stock env-to-module tail returns what RLlib's tail pieces return (every column's values, dtypes,
column order, and `shared_data`), on every step of real episodes: the stock pipeline, a recurrent module's
state pieces, and pieces of the checkpoint's own before the tail (PrevActionsPrevRewards reading the lookback,
MeanStdFilter updating, FlattenObservations on a Dict, a user's ConnectorV2). Also the batched stock module-to-env
pipeline on a recurrent module (its state outs), which the step-by-step loop runs with it."""

from __future__ import annotations

import pytest

from tests.support import m2e_checks
from tests.support.common import CARTPOLE
from tests.support.e2m_checks import run_side_by_side, tensor_differences

ZOO = ["lstm", "prev_ap_lstm", "meanstd_lstm", "dict_obs_lstm", "user_connector"]


def test_the_stock_tail_equals_rllibs_pieces_on_every_step():
    both = run_side_by_side(CARTPOLE, explore=False, seeds=[20])  # the demo policy plays long episodes
    assert both.compared == both.calls > 20
    assert both.found == []


@pytest.mark.parametrize("name", ZOO)
def test_the_tail_after_the_checkpoints_own_pieces_equals_rllibs_pieces_on_every_step(connector_zoo, name):
    both = run_side_by_side(connector_zoo / name, explore=name == "prev_ap_lstm")
    assert both.compared == both.calls > 5
    assert both.found == []


@pytest.mark.parametrize("name", ["framestack", "framestack_lstm"])
def test_the_tail_after_a_piece_that_fills_the_batch_equals_rllibs_pieces_on_every_step(connector_zoo, name):
    """FrameStackingEnvToModule puts the stacked observations into the batch itself: the tail built on that
    batch (with a recurrent module: the time rank, the states) equals RLlib's pieces."""
    both = run_side_by_side(connector_zoo / name, explore=False)
    assert both.compared == both.filled == both.calls > 5
    assert both.found == []


def test_a_difference_planted_in_the_tail_after_a_piece_that_fills_the_batch_is_seen(connector_zoo):
    """On every other step the last observation's last number one float32 step up, on the others the rows'
    episode order (`memorized_map_structure`) reversed: each is seen."""
    import torch

    steps = []

    def plant(mine, shared_data):
        steps.append(len(steps))
        if len(steps) % 2:
            last = mine["obs"][-1].view(-1)
            last[-1] = torch.nextafter(last[-1], torch.tensor(float("inf")))
        else:
            shared_data["memorized_map_structure"] = shared_data["memorized_map_structure"][::-1]

    planted = run_side_by_side(connector_zoo / "framestack", explore=False, seeds=[20], plant=plant)
    assert planted.compared == len(steps) > 3
    assert len(planted.found) == planted.compared
    assert sum(found.startswith("shared_data") for found in planted.found) == planted.compared // 2


@pytest.mark.parametrize(("name", "explore"), [("lstm", False), ("prev_ap_lstm", True)])
def test_the_batched_module_to_env_equals_the_pipeline_on_a_recurrent_module(connector_zoo, name, explore):
    both = m2e_checks.run_side_by_side(connector_zoo / name, explore, seeds=range(20, 24))
    assert both.calls > 5
    assert both.found == []


def test_a_difference_is_seen():
    import torch

    real = {"obs": torch.zeros(2, 3), "state_in": {"h": torch.ones(2, 4)}}
    assert tensor_differences(dict(real), real) == []
    assert tensor_differences({"obs": torch.zeros(2, 3, dtype=torch.float64), "state_in": real["state_in"]}, real)
    assert tensor_differences({"state_in": real["state_in"], "obs": real["obs"]}, real)  # column order
    assert tensor_differences({**real, "state_in": {"h": torch.zeros(2, 4)}}, real)
