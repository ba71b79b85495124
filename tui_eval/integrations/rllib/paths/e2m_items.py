"""What RLlib's stock env-to-module tail pieces read from a single-agent episode and do to one batch item,
each as the piece does it (RLlib 2.60); shared by `batched_e2m` and `filled_e2m`."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np


def last_observation(episode):
    """`episode.get_observations(-1)`: of an episode still in lists, InfiniteLookbackBuffer's
    `_get_int_index(-1)` is `data[-1]`."""
    buffer = episode.observations
    return buffer.data[-1] if _in_lists(buffer) else episode.get_observations(-1)


def last_observations(episodes: list) -> list:
    """`last_observation` of each episode (none already in numpy, as AddObservationsFromEpisodesToBatch asserts;
    an episode whose buffers are still lists is not)."""
    observations = []
    for episode in episodes:
        buffer = episode.observations
        if _in_lists(buffer) and not episode.rewards.finalized:  # `is_numpy` is `rewards.finalized`
            observations.append(buffer.data[-1])
        else:
            assert not episode.is_numpy
            observations.append(episode.get_observations(-1))
    return observations


def _in_lists(buffer) -> bool:
    """An InfiniteLookbackBuffer itself (no subclass), not finalized: its `get(-1)` is `data[-1]`."""
    return type(buffer) is _buffer_class() and not buffer.finalized


@functools.cache
def _buffer_class() -> Any:
    from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer

    return InfiniteLookbackBuffer


def add_time_rank(item):
    """AddTimeDimToBatchAndZeroPad's `tree.map_structure(np.expand_dims(s, axis=1 if a BatchedNdArray else 0))`
    on one item; of a plain array, `item[np.newaxis]`: the same view, shape (1, ...), without its checks."""
    if type(item) is np.ndarray:
        return item[np.newaxis]
    import tree
    from ray.rllib.utils.spaces.space_utils import BatchedNdArray

    return tree.map_structure(lambda s: np.expand_dims(s, axis=(1 if isinstance(s, BatchedNdArray) else 0)), item)


def state_in(rl_module, episode):
    """AddStatesFromEpisodesToBatch's state for one episode (EnvRunner side)."""
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.numpy import convert_to_numpy

    if (episode.t_started == 0 and len(episode) == 0) or Columns.STATE_OUT not in episode.extra_model_outputs:
        return convert_to_numpy(rl_module.get_initial_state())
    buffer = episode.extra_model_outputs[Columns.STATE_OUT]  # get_extra_model_outputs(key, indices=-1)
    return buffer.data[-1] if _in_lists(buffer) else episode.get_extra_model_outputs(key=Columns.STATE_OUT,
                                                                                      indices=-1)


def num_samples(item) -> int:
    from ray.rllib.utils.spaces.space_utils import BatchedNdArray

    return len(item) if isinstance(item, BatchedNdArray) else 1
