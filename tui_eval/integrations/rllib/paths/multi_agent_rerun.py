"""RLlib's multi-agent paths as the doctor replays them (tui_eval/paths/rerun.py's MultiTrace): the `connectors`
path itself on one seed, recording the actions its seeded sub-env was given; a `--path` loop playing the seed;
and the mapping probe's mechanics (the checkpoint's policy_mapping_fn, and a replay under every other mapping of
a loop's agents to the checkpoint's modules, up to MAX_MAPPINGS)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from tui_eval.integrations.rllib.paths.multi_agent_record import module_returns
from tui_eval.paths.rerun import MultiTrace, OneSeed, first_action_divergence

#: the most agent-to-module mappings the probe replays (modules ** agents)
MAX_MAPPINGS = 64


def _kept(actions: dict[Any, Any]) -> dict[Any, Any]:
    return {agent: np.array(a, copy=True) for agent, a in actions.items()}


def replay_connectors(path: Any, seed: int) -> MultiTrace:
    """The multi-agent `connectors` path itself on `seed`, recording the actions its seeded sub-env was given."""
    trace, records = MultiTrace(path.name), []  # type: MultiTrace, list[Any]
    for guard in path.loop.guards:
        def recording(action_dict, guard=guard, original=guard.step):
            if not guard.idle and guard.seed == seed:
                trace.actions.append(_kept(action_dict))
            return original(action_dict)
        guard.step = recording
    try:
        path.run(OneSeed(seed), records.append)
    finally:
        for guard in path.loop.guards:
            del guard.step
    if records:
        trace.modules = {m: r for m, r, _ in records[0].modules}
    return trace


def replay_loop(path: Any, seed: int) -> MultiTrace:
    guard = path.play(seed, keep_actions=True)
    modules = module_returns([guard.episode], path.module_ids) if guard.episode is not None else ()
    return MultiTrace(path.name, list(guard.actions), {m: r for m, r, _ in modules},
                      note="custom path: the actions its loop sent to the env")


def checkpoint_mapping(mapping_fn: Any, agents: Sequence[Any]) -> dict[Any, str]:
    """Each agent's module as the checkpoint's policy_mapping_fn gives it (called as RLlib's episode calls it)."""
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

    episode = MultiAgentEpisode(agent_to_module_mapping_fn=mapping_fn)
    return {agent: str(episode.module_for(agent)) for agent in agents}


def find_mapping(connectors: Any, loop: MultiTrace, seed: int, module_ids: Sequence[str]) -> dict[Any, str] | None:
    """The mapping of the loop's agents to modules under which `connectors` sends the loop's actions at every
    step of `seed` (the checkpoint's own mapping left out); None when no mapping does, or there are too many."""
    agents = sorted({agent for step in loop.actions for agent in step}, key=str)
    own = checkpoint_mapping(connectors.loop.mapping_fn, agents)
    if not agents or len(module_ids) ** len(agents) > MAX_MAPPINGS:
        return None
    original = connectors.loop.mapping_fn
    try:
        for combo in itertools.product(module_ids, repeat=len(agents)):
            mapping = dict(zip(agents, combo, strict=True))
            if mapping == own:
                continue
            connectors.loop.mapping_fn = lambda agent_id, episode, mapping=mapping, **kw: mapping[agent_id]
            if first_action_divergence(replay_connectors(connectors, seed), loop) is None:
                return mapping
    finally:
        connectors.loop.mapping_fn = original
    return None
