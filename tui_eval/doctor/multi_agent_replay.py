"""Replaying a multi-agent path on one seed, and the probe that finds a loop's agent-to-module mapping.

A multi-agent trace is, per env step, the dict of actions by agent ID that the path sent to its env, and the
episode's return per module (tui-eval's count: the checkpoint's policy_mapping_fn). Built-in `connectors`
paths run themselves on the seed (every other sub-env idle) with their guard's `step` recorded; a `--path`
loop plays the seed with its actions kept. `evaluate` runs inside RLlib's EnvRunner and is not replayed (its
episodes are compared by their returns).

The mapping probe replays a `connectors` path with each other mapping of the agents a loop acted for to the
checkpoint's modules: the one under which its actions equal the loop's at every step is the loop's mapping.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tui_eval.doctor.replay import close
from tui_eval.integrations.rllib.paths.multi_agent_record import module_returns
from tui_eval.paths.rerun import OneSeed

#: the most agent-to-module mappings the probe replays (modules ** agents)
MAX_MAPPINGS = 64


@dataclass
class MultiTrace:
    path: str
    actions: list[dict[Any, Any]] = field(default_factory=list)  # per env step: agent ID -> action sent
    modules: dict[str, float] = field(default_factory=dict)  # module ID -> return
    note: str = ""

    @property
    def replayed(self) -> bool:
        return bool(self.actions)


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


def replay_custom(path: Any, seed: int) -> MultiTrace:
    guard = path.play(seed, keep_actions=True)
    modules = module_returns([guard.episode], path.module_ids) if guard.episode is not None else ()
    return MultiTrace(path.name, list(guard.actions), {m: r for m, r, _ in modules},
                      note="custom path: the actions its loop sent to the env")


def replay_multi_agent(path: Any, seed: int) -> MultiTrace:
    from tui_eval.integrations.rllib.paths.multi_agent_connectors import RllibMultiAgentConnectorsPath
    from tui_eval.integrations.rllib.paths.multi_agent_custom import MultiAgentCustomPath

    if isinstance(path, MultiAgentCustomPath):
        return replay_custom(path, seed)
    if isinstance(path, RllibMultiAgentConnectorsPath):
        return replay_connectors(path, seed)
    return MultiTrace(path.name, note="not replayed (RLlib's EnvRunner steps it): its episodes' returns are compared")


def first_action_divergence(a: MultiTrace, b: MultiTrace) -> tuple[int, dict[str, Any]] | None:
    """(step, {path: that step's actions}) where two traces first send other actions (or end apart); None
    when they send the same actions throughout."""
    for t in range(max(len(a.actions), len(b.actions))):
        sa = a.actions[t] if t < len(a.actions) else None
        sb = b.actions[t] if t < len(b.actions) else None
        if sa is None or sb is None or sa.keys() != sb.keys() or not all(close(sa[k], sb[k]) for k in sa):
            return t, {a.path: plain(sa), b.path: plain(sb)}
    return None


def plain(actions: dict[Any, Any] | None) -> Any:
    if actions is None:
        return "episode over"
    return {str(agent): np.asarray(a).tolist() for agent, a in actions.items()}


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
