"""`--vs-env` / `--vs-env-config` for a multi-agent checkpoint: the second env must be a MultiAgentEnv too.

Its paths (`P@vs-env`) run every module of the checkpoint on that env, each agent mapped by the checkpoint's
policy_mapping_fn, as on the first env. Refused before any episode: a single-agent env (no agents to map), an
agent observing other observations than it was trained on, and, for path `connectors@vs-env` only, agents
the checkpoint's restored pipelines were not built for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tui_eval.errors import BadInput, first_line


def check_multi_agent_vs_env(recipe: Any, trained: Any, compatible: Callable[[Any, Any], bool]) -> list:
    """The second env's agents that the checkpoint's saved pipelines do not know (their spaces are `trained`, a
    Dict by agent ID, or None when unreadable); BadInput (one line) unless `recipe` (an EnvRecipe) makes a
    MultiAgentEnv whose agents known to the pipelines observe what they were trained on (`compatible`)."""
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    try:
        env = recipe.make_one(recipe.context(), env_checker=False)
    except Exception as exc:  # the user's env creator may raise anything
        raise BadInput(f"could not create --vs-env {recipe.name!r} ({first_line(exc)}); check --vs-env, "
                       "--vs-env-config and the code that registers the env (--import)") from None
    try:
        inner = env.unwrapped
        if not isinstance(inner, MultiAgentEnv):
            raise BadInput(f"--vs-env {recipe.name!r} is a single-agent env, but the checkpoint is multi-agent (its "
                           "modules act for a MultiAgentEnv's agents); pass a MultiAgentEnv as --vs-env (or only "
                           "--vs-env-config, to change the checkpoint's own env's config)")
        known = dict(getattr(trained, "spaces", None) or {})
        for agent in inner.possible_agents:
            if agent in known and not compatible(known[agent], inner.get_observation_space(agent)):
                raise BadInput(f"agent {agent!r} was trained on observations {known[agent]}, but --vs-env "
                               f"{recipe.name!r} gives it {inner.get_observation_space(agent)}; pass an env whose "
                               "agents observe what they were trained on")
        return [agent for agent in inner.possible_agents if known and agent not in known]
    finally:
        env.close()


def refuse_new_agents(agents: list, recipe: Any) -> None:
    """Path `connectors@vs-env` restores the checkpoint's pipelines, built for the training env's agents: an
    agent they do not know has no action space in them (RLlib's own runner, `evaluate@vs-env`, builds its
    pipelines for the env it runs, so it takes such agents)."""
    if agents:
        raise BadInput(f"--vs-env {recipe.name!r} has agents the checkpoint's connector pipelines were not built "
                       f"for ({', '.join(map(str, agents))}): path connectors@vs-env restores those pipelines and "
                       "cannot act for them; run --paths evaluate,evaluate@vs-env (RLlib builds its pipelines for "
                       "the env), or pass an env with the training env's agents")
