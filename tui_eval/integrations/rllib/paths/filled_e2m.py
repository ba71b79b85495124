"""RLlib's stock env-to-module tail on a batch that a piece before it already wrote, for the step-by-step loop.

FrameStackingEnvToModule (RLlib's only env-to-module piece that writes the batch itself; its
FlattenObservations, MeanStdFilter, PrevActionsPrevRewards and observation preprocessors rewrite the
episodes) puts each episode's stacked observation into the batch with `add_batch_item`:
`{OBS: {(episode id,): [item]}}`. The stock tail then does, on that batch (RLlib 2.60):
AddObservationsFromEpisodesToBatch: nothing (OBS is there);
AddTimeDimToBatchAndZeroPad (a stateful module, no STATE_IN yet): every item of every column gets the time
rank (`np.expand_dims`, axis 1 for a BatchedNdArray leaf), and `_added_single_ts_time_rank`;
AddStatesFromEpisodesToBatch: one state per episode under STATE_IN; BatchIndividualItems: each column's items
in its keys' order, `batch(..., individual_items_already_have_batch_dim="auto")`, and OBS's keys (one per
sample) as `memorized_map_structure`; NumpyToTensor. `filled_tail` builds the same from the same calls. It
takes only batches of that shape (`takes`): OBS among the columns, every column a dict of lists under
one-element keys, no INFOS (NumpyToTensor moves it to the end, AddTimeDim would walk it), no STATE_IN (the
state pieces would step aside); anything else runs the real pieces.
"""

from __future__ import annotations

from typing import Any

from tui_eval.integrations.rllib.paths.e2m_items import add_time_rank, num_samples, state_in


def takes(batch: dict[str, Any], obs: str, infos: str, state_in: str) -> bool:
    """Whether `filled_tail` stands for the stock tail on `batch` (see the module's docstring)."""
    return obs in batch and infos not in batch and state_in not in batch and all(
        type(data) is dict and all(type(key) is tuple and len(key) == 1 and type(items) is list
                                   for key, items in data.items())
        for data in batch.values())


def filled_tail(batched, rl_module, batch: dict[str, Any], episodes: list, shared_data: dict) -> dict[str, Any]:
    """The stock tail's output on `batch` (which `takes`), written by the pieces before it for `episodes`
    (which `batched.batchable`); `batched` is the BatchedEnvToModule for that tail. Leaves `batch` as it is."""
    obs = batched.obs_column
    columns = {column: {key: list(items) for key, items in data.items()} for column, data in batch.items()}
    # AddObservationsFromEpisodesToBatch: OBS is there (`takes`), it adds nothing
    stateful = rl_module.is_stateful()
    if stateful:  # AddTimeDimToBatchAndZeroPad
        for data in columns.values():
            for items in data.values():
                items[:] = [add_time_rank(item) for item in items]
        shared_data["_added_single_ts_time_rank"] = True
    out: dict[str, Any] = {}
    for column, data in columns.items():  # BatchIndividualItems
        rows = [item for items in data.values() for item in items]
        out[column] = batched.batch_fn(rows, individual_items_already_have_batch_dim="auto")
    shared_data["memorized_map_structure"] = [eps_id for (eps_id,), items in columns[obs].items()
                                              for item in items for _ in range(num_samples(item))]
    if stateful:  # AddStatesFromEpisodesToBatch, then BatchIndividualItems
        out[batched.state_column] = batched.batch_structs([state_in(rl_module, e) for e in episodes])
    return batched.to_tensors(out)  # NumpyToTensor
