"""RLlib's stock env-to-module tail applied to all episodes at once, for the step-by-step loop.

RLlib appends its default pieces to every env-to-module pipeline: AddObservationsFromEpisodesToBatch,
AddTimeDimToBatchAndZeroPad, AddStatesFromEpisodesToBatch, BatchIndividualItems, NumpyToTensor. Each walks
the episodes or the batch item by item (a dict per column keyed by episode, tree walks, a device lookup per
call); together they cost as much as the module's forward. `BatchedEnvToModule` runs the pieces before that
tail (a user's own, PrevActionsPrevRewards, FlattenObservations, MeanStdFilter, ...) as the pipeline does,
then builds the tail's output from the same episode reads and the same RLlib calls the pieces make:
`get_observations(-1)` of every episode, the time rank (`np.expand_dims`, as a new-axis view), the state from
`get_initial_state()` or the last `STATE_OUT`, `batch(..., individual_items_already_have_batch_dim="auto")`,
`memorized_map_structure`, and NumpyToTensor's per-leaf conversion. It does so only where the tail starts
from an empty batch on single-agent episodes (what most of RLlib's own head pieces leave), or, through
`filled_e2m`, from a batch a piece before it wrote (FrameStackingEnvToModule); anything else runs the real
tail pieces. `tests/support/e2m_checks.py` checks both against each other on every step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tui_eval.integrations.rllib.paths import filled_e2m
from tui_eval.integrations.rllib.paths.e2m_items import add_time_rank, last_observations, num_samples, state_in


def _stock_tail() -> tuple[type, ...]:
    from ray.rllib.connectors.common import (
        AddObservationsFromEpisodesToBatch,
        AddStatesFromEpisodesToBatch,
        AddTimeDimToBatchAndZeroPad,
        BatchIndividualItems,
        NumpyToTensor,
    )

    return (AddObservationsFromEpisodesToBatch, AddTimeDimToBatchAndZeroPad, AddStatesFromEpisodesToBatch,
            BatchIndividualItems, NumpyToTensor)


def stock_tail_start(pipeline) -> int | None:
    """Where the pipeline's stock tail begins (its pieces exactly RLlib's classes, as an EnvRunner builds
    them), or None when it does not end with one."""
    tail = _stock_tail()
    pieces = list(pipeline.connectors)
    start = len(pieces) - len(tail)
    if start < 0 or any(type(piece) is not cls for piece, cls in zip(pieces[start:], tail)):
        return None
    add_obs, add_time, add_states, batch_items, _ = pieces[start:]
    if add_obs._as_learner_connector or add_time._as_learner_connector or add_states._as_learner_connector \
            or batch_items._multi_agent:
        return None
    return start


class BatchedEnvToModule:
    """Called as the env-to-module pipeline is (keyword arguments), returns what it returns."""

    def __init__(self, pipeline, start: int) -> None:
        from ray.rllib.core.columns import Columns
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
        from ray.rllib.env.single_agent_episode import SingleAgentEpisode
        from ray.rllib.utils.spaces.space_utils import batch as batch_fn

        self.pipeline, self.start = pipeline, start
        # the pieces as they stand now: a run does not change its pipeline
        self.head, self.tail = list(pipeline.connectors[:start]), list(pipeline.connectors[start:])
        self.obs_column, self.state_column, self._infos = Columns.OBS, Columns.STATE_IN, Columns.INFOS
        self._episode_cls, self._multi_module_cls, self.batch_fn = SingleAgentEpisode, MultiRLModule, batch_fn
        self._device_checked: tuple[Any, bool] = (object(), False)  # (NumpyToTensor's device, on the CPU)

    def __call__(self, *, rl_module, batch: dict[str, Any] | None = None, episodes, explore: bool,
                 shared_data: dict | None = None, **kwargs) -> dict[str, Any]:
        shared_data = shared_data if shared_data is not None else {}
        if batch is None:
            batch = {}
        if self.head:
            batch = run_pieces(self.head, rl_module=rl_module, batch=batch, episodes=episodes, explore=explore,
                               shared_data=shared_data, **kwargs)
        out = self.batched(rl_module, batch, episodes, shared_data) if self.batchable(rl_module, episodes) else None
        if out is None:  # not a case the batched tail handles
            return self.real_tail(rl_module=rl_module, batch=batch, episodes=episodes, explore=explore,
                                  shared_data=shared_data, **kwargs)
        return out

    def batched(self, rl_module, batch: dict[str, Any], episodes: list, shared_data: dict) -> dict[str, Any] | None:
        """The tail's output built here: from an empty batch, or from one the pieces before the tail filled in
        a way `filled_e2m` knows; None (nothing done, shared_data untouched) for any other case."""
        if not batch:
            return self.batched_tail(rl_module, episodes, shared_data)
        if self.takes_filled(batch):
            return filled_e2m.filled_tail(self, rl_module, batch, episodes, shared_data)
        return None

    def batchable(self, rl_module, episodes: list) -> bool:
        """Single-agent episodes with distinct ids (each its own batch row, in order) and a single module."""
        return bool(episodes) and isinstance(episodes[0], self._episode_cls) \
            and not isinstance(rl_module, self._multi_module_cls) and len({e.id_ for e in episodes}) == len(episodes)

    def takes_filled(self, batch: dict[str, Any]) -> bool:
        """A batch already written by the pieces before the tail that `filled_e2m.filled_tail` builds on."""
        return filled_e2m.takes(batch, self.obs_column, self._infos, self.state_column)

    def real_tail(self, **kwargs) -> dict[str, Any]:
        """The tail's own pieces, as the pipeline calls them."""
        return run_pieces(self.tail, **kwargs)

    def batched_tail(self, rl_module, episodes: list, shared_data: dict) -> dict[str, Any] | None:
        """The tail's output for an empty batch of single-agent episodes (see `batchable`); a subclass may
        return None (nothing done, shared_data untouched) for a case it leaves to the real tail."""
        observations = last_observations(episodes)  # AddObservationsFromEpisodesToBatch
        stateful = rl_module.is_stateful()
        if stateful:  # AddTimeDimToBatchAndZeroPad
            observations = [add_time_rank(item) for item in observations]
            shared_data["_added_single_ts_time_rank"] = True
        if all(type(item) is np.ndarray for item in observations):  # BatchIndividualItems' memorized_map_structure
            rows = [episode.id_ for episode in episodes]  # one row each; a BatchedNdArray (a subclass) holds more
        else:
            rows = [id_ for episode, item in zip(episodes, observations)
                    for id_ in [episode.id_] * (1 if type(item) is np.ndarray else num_samples(item))]
        batch: dict[str, Any] = {
            self.obs_column: self.batch_fn(observations, individual_items_already_have_batch_dim="auto")}
        shared_data["memorized_map_structure"] = rows
        if stateful:  # AddStatesFromEpisodesToBatch, then BatchIndividualItems
            batch[self.state_column] = self.batch_structs([state_in(rl_module, episode) for episode in episodes])
        return self.to_tensors(batch)  # NumpyToTensor

    def batch_structs(self, items: list) -> Any:
        """RLlib's `batch(items, individual_items_already_have_batch_dim="auto")`; for dicts of plain arrays with
        the same keys (a recurrent module's states), its `tree.map_structure` over them is one `batch` per key."""
        first = items[0]
        if type(first) is dict and all(type(v) is np.ndarray for v in first.values()) \
                and all(type(item) is dict and item.keys() == first.keys() for item in items):
            return {key: self.batch_fn([item[key] for item in items]) for key in first}
        return self.batch_fn(items, individual_items_already_have_batch_dim="auto")

    def to_tensors(self, batch: dict[str, Any]) -> dict[str, Any]:
        """NumpyToTensor on a single-agent batch without infos: `convert_to_torch_tensor`, per leaf as it
        converts a writable numeric array on the CPU (`from_numpy`, floats but float16 to float32)."""
        piece = self.tail[-1]  # its device is read on each call, as the piece reads it
        flat = all(type(value) is np.ndarray for value in batch.values())
        if not self._on_cpu(piece._device) \
                or not all(_plain_array(leaf) for leaf in (batch.values() if flat else _leaves(batch))):
            from ray.rllib.utils.torch_utils import convert_to_torch_tensor

            return convert_to_torch_tensor(batch, pin_memory=piece._pin_memory, device=piece._device)
        if flat:
            return {column: _tensor(value) for column, value in batch.items()}
        return {column: _tensor(value) if type(value) is np.ndarray else _tensors(value)
                for column, value in batch.items()}

    def _on_cpu(self, device) -> bool:
        if device is not self._device_checked[0]:
            import torch

            self._device_checked = (device, device is None or torch.device(device).type == "cpu")
        return self._device_checked[1]


def run_pieces(pieces: list, *, rl_module, batch: dict[str, Any], episodes, explore, shared_data, metrics=None,
               **kwargs) -> dict[str, Any]:
    """`ConnectorPipelineV2.__call__` over `pieces`, less its timers (the loop logs no metrics)."""
    for piece in pieces:
        batch = piece(rl_module=rl_module, batch=batch, episodes=episodes, explore=explore,
                      shared_data=shared_data, metrics=metrics, data=batch, **kwargs)
        if not isinstance(batch, dict):
            raise ValueError(f"`data` returned by ConnectorV2 {piece} must be a dict! You returned {batch}.")
    return batch


def _tensors(value):
    """`_tensor` on each leaf (as tree.map_structure walks them); a dict of arrays directly."""
    if type(value) is dict and all(type(v) is np.ndarray for v in value.values()):
        return {key: _tensor(v) for key, v in value.items()}
    import tree

    return tree.map_structure(_tensor, value)


def _plain_array(value: Any) -> bool:
    return type(value) is np.ndarray and value.dtype != object and value.dtype.type is not np.str_ \
        and value.flags.writeable


def _tensor(array: np.ndarray):
    """`torch.from_numpy`, then `.float()` of a float array but float16 (a float32 one is handed back as is)."""
    import torch

    tensor = torch.from_numpy(array)
    if array.dtype.kind == "f" and array.dtype != np.float32 and array.dtype != np.float16:
        tensor = tensor.float()
    return tensor


def _leaves(batch: dict[str, Any]) -> list:
    import tree

    return tree.flatten(batch)

