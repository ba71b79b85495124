"""One finished MultiAgentEpisode as an EpisodeRecord: the team return, each module's return and agent steps.

Both RLlib paths build their multi-agent records here, from the episode's chunks (evaluate() hands the
earlier chunks of an episode that spanned calls to its callback) and the guard's facts about the episode.
A module's return adds up, as RLlib's own `module_episode_returns` metrics do, the returns of the agents
the policy_mapping_fn mapped to it; the team return is all modules' returns together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui_eval.records import EpisodeRecord


def module_returns(chunks: Sequence[Any], module_ids: Sequence[str]) -> tuple[tuple[str, float, int], ...]:
    """(module id, return, agent steps) for every module of the checkpoint, in `module_ids`' order."""
    returns = {m: 0.0 for m in module_ids}
    steps = {m: 0 for m in module_ids}
    for chunk in chunks:
        for agent_id, agent_episode in chunk.agent_episodes.items():
            module = chunk.module_for(agent_id)
            returns[module] = returns.get(module, 0.0) + float(sum(agent_episode.get_rewards()))
            steps[module] = steps.get(module, 0) + len(agent_episode)
    return tuple((m, returns[m], steps[m]) for m in returns)


def multi_agent_record(*, path: str, facts: dict[str, Any], chunks: Sequence[Any], module_ids: Sequence[str],
                       view: str | None, wall_s: float, explore: bool) -> EpisodeRecord:
    """The record of one multi-agent episode; `ret` is the team return, or module `view`'s when given."""
    modules = module_returns(chunks, module_ids)
    team = sum(r for _, r, _ in modules)
    record = EpisodeRecord(path=path, seed=int(facts["seed"]), block=int(facts["block"]), ret=team,
                           length=sum(len(c) for c in chunks), success=facts["success"],
                           invalid=facts["invalid"] is not None, reason=facts["invalid"], wall_s=wall_s,
                           explore=explore, modules=modules)
    if view is None:
        return record
    import dataclasses

    return dataclasses.replace(record, ret=record.for_module(view).ret)
