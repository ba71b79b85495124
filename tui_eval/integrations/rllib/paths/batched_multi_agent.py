"""RLlib's stock multi-agent env-to-module tail and module-to-env pipeline applied per module at once, for the
multi-agent step-by-step loop (multi_agent_loop.py).

An EnvRunner of a multi-agent config appends AddObservationsFromEpisodesToBatch, AddTimeDimToBatchAndZeroPad,
AddStatesFromEpisodesToBatch, AgentToModuleMapping, BatchIndividualItems(multi_agent=True) and NumpyToTensor
to its env-to-module pipeline, and wraps its module-to-env pipeline in GetActions, TensorToNumpy,
UnBatchToIndividualItems, ModuleToAgentUnmapping, RemoveSingleTsTimeRankFromBatch (before the user's pieces)
and NormalizeAndClipActions, ListifyDataForVectorEnv (after them). Each piece walks every (episode, agent,
module) item on its own, and several ask each MultiAgentEpisode again which agents stepped.

`BatchedMultiAgentEnvToModule` runs the pieces before the tail as the pipeline does, then builds the tail's
output from one `get_observations(-1)` per episode (the agents that stepped, and of them the ones to act),
each agent's last observation and state as the pieces read them, per module the rows of the agents mapped to
it in RLlib's order (episodes in order, each episode's agents as its set of stepped agents iterates),
`memorized_map_structure`, RLlib's `batch` and NumpyToTensor's conversion. `FusedMultiAgentModuleToEnv`
returns what the stock module-to-env pipeline returns: per module GetActions and TensorToNumpy on its whole
batch, its rows unbatched to the agents `memorized_map_structure` lists, the time rank squeezed off a recurrent
module's rows, the actions for the env per agent as NormalizeAndClipActions makes them, one dict per sub-env
in the order ListifyDataForVectorEnv fills it. Both step aside (the real pieces run) for anything else: a
batch already filled before the tail, a module id the MultiRLModule does not hold or that is a column name,
an agent listed twice, rows that do not match the agents, a done agent in the map, other pieces.
`tests/support/multi_agent_checks.py` checks both against the real pieces on every step.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from tui_eval.integrations.rllib.paths.batched_e2m import BatchedEnvToModule
from tui_eval.integrations.rllib.paths.e2m_items import add_time_rank, last_observation, state_in
from tui_eval.integrations.rllib.paths.fused_m2e import actions_as_numpy, squeeze_first, unbatch_rows

MULTI_AGENT_STOCK_M2E = ("GetActions", "TensorToNumpy", "UnBatchToIndividualItems", "ModuleToAgentUnmapping",
                         "RemoveSingleTsTimeRankFromBatch", "NormalizeAndClipActions", "ListifyDataForVectorEnv")


def _multi_agent_tail() -> tuple[type, ...]:
    from ray.rllib.connectors.common import (
        AddObservationsFromEpisodesToBatch,
        AddStatesFromEpisodesToBatch,
        AddTimeDimToBatchAndZeroPad,
        AgentToModuleMapping,
        BatchIndividualItems,
        NumpyToTensor,
    )

    return (AddObservationsFromEpisodesToBatch, AddTimeDimToBatchAndZeroPad, AddStatesFromEpisodesToBatch,
            AgentToModuleMapping, BatchIndividualItems, NumpyToTensor)


def multi_agent_tail_start(pipeline) -> int | None:
    """Where the pipeline's stock multi-agent tail begins (its pieces exactly RLlib's classes, as a multi-agent
    EnvRunner builds them), or None when it does not end with one."""
    tail = _multi_agent_tail()
    pieces = list(pipeline.connectors)
    start = len(pieces) - len(tail)
    if start < 0 or any(type(piece) is not cls for piece, cls in zip(pieces[start:], tail)):
        return None
    if any(piece._as_learner_connector for piece in pieces[start:start + 4]) or not pieces[start + 4]._multi_agent:
        return None
    return start


class BatchedMultiAgentEnvToModule(BatchedEnvToModule):
    """Called as the multi-agent env-to-module pipeline is (keyword arguments), returns what it returns."""

    def batchable(self, rl_module, episodes: list) -> bool:
        """MultiAgentEpisodes with distinct ids and a MultiRLModule none of whose module ids is a column the
        tail fills."""
        from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

        return bool(episodes) and all(type(e) is MultiAgentEpisode for e in episodes) \
            and isinstance(rl_module, self._multi_module_cls) and len({e.id_ for e in episodes}) == len(episodes) \
            and self.obs_column not in rl_module and self.state_column not in rl_module

    def takes_filled(self, batch: dict[str, Any]) -> bool:
        """A batch the pieces before the tail filled (FrameStacking) runs the real tail: `filled_e2m` is for
        single-agent batches."""
        return False

    def batched_tail(self, rl_module, episodes: list, shared_data: dict) -> dict[str, Any] | None:
        """The tail's output for an empty batch of multi-agent episodes (see `batchable`); None (nothing
        done) where an agent's item is one this does not know."""
        items = _agent_items(rl_module, episodes)
        if items is None:
            return None
        stateful = rl_module.is_stateful()  # the MultiRLModule's: any of its modules
        module_stateful = {m: stateful and rl_module[m].is_stateful() for m in {item[0] for item in items}}
        per_module: dict[Any, list] = {}
        memorized: dict[Any, list] = {}
        states: dict[Any, list] = {}
        for module_id, agent_id, episode_id, sa_episode in items:  # the agents AgentToModuleMapping keeps
            observation = last_observation(sa_episode)
            if module_stateful[module_id]:  # AddTimeDimToBatchAndZeroPad
                observation = add_time_rank(observation)
            memorized.setdefault(module_id, []).append((episode_id, agent_id))
            per_module.setdefault(module_id, []).append(observation)
            if module_stateful[module_id]:  # AddStatesFromEpisodesToBatch
                states.setdefault(module_id, []).append(state_in(rl_module[module_id], sa_episode))
        if stateful:
            shared_data["_added_single_ts_time_rank"] = True
        shared_data["memorized_map_structure"] = memorized
        batch: dict[Any, dict[str, Any]] = {}
        for module_id, observations in per_module.items():  # BatchIndividualItems, NumpyToTensor
            module_batch = {
                self.obs_column: self.batch_fn(observations, individual_items_already_have_batch_dim="auto")}
            if module_id in states:
                module_batch[self.state_column] = self.batch_structs(states[module_id])
            batch[module_id] = self.to_tensors(module_batch)
        return batch


def _agent_items(rl_module, episodes: list) -> list[tuple] | None:
    """(module id, agent id, episode id, agent episode) of every agent to act, in the order the tail pieces
    walk them (episodes in order, each one's agents that stepped in their set's order); None where the
    pieces would do other than `batched_tail` does."""
    items = []
    for episode in episodes:
        last = episode.get_observations(-1)  # what get_agents_that_stepped and get_agents_to_act read
        for agent_id in set(last.keys()):
            sa_episode = episode.agent_episodes[agent_id]
            module_id = sa_episode.module_id
            if sa_episode.agent_id != agent_id or sa_episode.multi_agent_episode_id != episode.id_ \
                    or module_id not in rl_module:
                return None
            if not sa_episode.is_done:  # a done agent's items are dropped by AgentToModuleMapping
                items.append((module_id, agent_id, episode.id_, sa_episode))
    return items


class FusedMultiAgentModuleToEnv:
    """Called as the stock multi-agent module-to-env pipeline is (keyword arguments), returns what it returns."""

    def __init__(self, module_to_env) -> None:
        import gymnasium as gym
        from ray.rllib.core.columns import Columns
        from ray.rllib.utils.spaces.space_utils import clip_action, unsquash_action

        self.pipeline = module_to_env
        normalize = module_to_env.connectors[MULTI_AGENT_STOCK_M2E.index("NormalizeAndClipActions")]
        self.normalize_actions, self.clip_actions = bool(normalize.normalize_actions), bool(normalize.clip_actions)
        self._normalize = normalize  # its per-agent action space struct is read on each call, as it reads it
        self._change = unsquash_action if self.normalize_actions else clip_action
        # unsquash_action / clip_action hand an action of one of these spaces back as it is
        self._unchanged = (gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)
        self._actions, self._for_env, self._state_out = Columns.ACTIONS, Columns.ACTIONS_FOR_ENV, Columns.STATE_OUT

    def __call__(self, *, rl_module, batch: dict[str, Any], episodes, explore: bool, shared_data: dict,
                 **kwargs) -> dict[str, Any]:
        structs = self._normalize._action_space_struct
        index = self._episode_index(rl_module, batch, episodes, shared_data, structs)
        if index is None:
            return self.pipeline(rl_module=rl_module, batch=batch, episodes=episodes, explore=explore,
                                 shared_data=shared_data, **kwargs)
        memorized = shared_data["memorized_map_structure"]
        squeeze = bool(shared_data.get("_added_single_ts_time_rank"))
        out: dict[str, list[dict]] = {}
        for module_id, module_batch in batch.items():
            data = actions_as_numpy(module_batch, rl_module[module_id], explore)  # GetActions, TensorToNumpy
            rows_of = memorized[module_id]
            stateful = squeeze and rl_module[module_id].is_stateful()
            for column, value in data.items():  # UnBatch..., ModuleToAgentUnmapping, RemoveSingleTs...
                rows = unbatch_rows(value)
                if stateful and column != self._state_out:
                    rows = [squeeze_first(row) for row in rows]
                per_env = out.setdefault(column, [{} for _ in episodes])
                for (episode_id, agent_id), row in zip(rows_of, rows):  # ListifyDataForVectorEnv
                    per_env[index.get(episode_id, 0)][agent_id] = row
        if self.normalize_actions or self.clip_actions:  # NormalizeAndClipActions
            out[self._for_env] = [{agent_id: self._for_env_action(structs[agent_id], action)
                                   for agent_id, action in per_env.items()} for per_env in out[self._actions]]
        return out

    def _for_env_action(self, struct, action):
        """NormalizeAndClipActions on a deep copy of one agent's action (`struct`: its action space's)."""
        if isinstance(struct, self._unchanged):
            return action.copy() if type(action) is np.ndarray else action if isinstance(action, np.generic) \
                else copy.deepcopy(action)
        return self._change(copy.deepcopy(action), struct)

    def _episode_index(self, rl_module, batch, episodes, shared_data, structs) -> dict | None:
        """Each episode id's position as ListifyDataForVectorEnv finds it (the first with that id), where the
        real pieces would do what `__call__` does; else None."""
        import torch

        memorized = shared_data.get("memorized_map_structure")
        if not isinstance(memorized, dict) or not isinstance(structs, dict) or not episodes:
            return None
        by_id: dict[Any, Any] = {}
        index: dict[Any, int] = {}
        for i, episode in enumerate(episodes):
            by_id.setdefault(episode.id_, episode)
            index.setdefault(episode.id_, i)
        renamed = shared_data.get("vector_env_episodes_map", {})
        for module_id, module_batch in batch.items():
            rows_of = memorized.get(module_id)
            if rows_of is None or module_id not in rl_module or len(set(rows_of)) != len(rows_of) \
                    or not _rows_match(module_batch, len(rows_of), torch.Tensor) \
                    or any(agent_id not in structs for _, agent_id in rows_of):
                return None
            for episode_id, agent_id in rows_of:  # UnBatchToIndividualItems' check: live agents only
                episode = by_id.get(renamed.get(episode_id, episode_id))
                if episode is None:
                    return None
                if episode.agent_episodes and not episode.is_done:
                    sa_episode = episode.agent_episodes.get(agent_id)
                    if sa_episode is None or sa_episode.is_done:
                        return None
        renamed_back = shared_data.get("old_episode_ids", {})
        return {episode_id: index.get(renamed_back.get(episode_id, episode_id), 0)
                for rows_of in (memorized[m] for m in batch) for episode_id, _ in rows_of}


def _rows_match(module_batch: Any, rows: int, tensor_cls) -> bool:
    """Every column one tensor (or a dict of tensors: a recurrent state) of `rows` rows."""
    if not isinstance(module_batch, dict) or not module_batch:
        return False
    for value in module_batch.values():
        leaves = value.values() if type(value) is dict else (value,)
        if not all(type(leaf) is tensor_cls and leaf.dim() > 0 and leaf.shape[0] == rows for leaf in leaves):
            return False
    return True


def why_not_fusable_multi_agent_module_to_env(module_to_env) -> str | None:
    """None when `FusedMultiAgentModuleToEnv` stands for this pipeline (exactly RLlib's stock pieces, as a
    multi-agent EnvRunner builds them); else why not, in a few words."""
    pieces = list(module_to_env.connectors)
    names = tuple(type(c).__name__ for c in pieces)
    if names != MULTI_AGENT_STOCK_M2E:
        extra = [n for n in names if n not in MULTI_AGENT_STOCK_M2E]
        return f"module-to-env connector {extra[0]}" if extra else "module-to-env pieces in another order"
    if any(type(piece) is not cls for piece, cls in zip(pieces, _multi_agent_m2e())):
        return "module-to-env pieces of other classes than RLlib's"
    return None


def _multi_agent_m2e() -> tuple[type, ...]:
    from ray.rllib.connectors.common import TensorToNumpy
    from ray.rllib.connectors.module_to_env import (
        GetActions,
        ListifyDataForVectorEnv,
        ModuleToAgentUnmapping,
        NormalizeAndClipActions,
        RemoveSingleTsTimeRankFromBatch,
        UnBatchToIndividualItems,
    )

    return (GetActions, TensorToNumpy, UnBatchToIndividualItems, ModuleToAgentUnmapping,
            RemoveSingleTsTimeRankFromBatch, NormalizeAndClipActions, ListifyDataForVectorEnv)
