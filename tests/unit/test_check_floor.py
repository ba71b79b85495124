"""How many of the first path's seeds the check replays for its noise floor beside the checked seed: all it is
offered, less the seed or two that would start one more round of episodes on a path's few envs (the other envs idle
through it)."""

from __future__ import annotations

import pytest

from tui_eval.isolation.check_serve import FLOOR_SEEDS, floor_count


@pytest.mark.parametrize("capacity", [1, 3, 5, 6, 7, 9, 16, 64, 4096])
def test_whole_rounds_or_many_envs_replay_every_floor_seed(capacity):
    assert floor_count(capacity) == FLOOR_SEEDS


@pytest.mark.parametrize("capacity", [2, 4, 8])
def test_a_last_round_of_one_seed_is_left_out(capacity):
    count = floor_count(capacity)
    assert count == FLOOR_SEEDS - 1 and (count + 1) % capacity == 0
