"""Env facts beyond id, config and spaces, for sim-to-sim parity: the physics step and the reward range.

Read where the env exposes them (`dt`: MuJoCo and classic-control envs; CartPole's `tau`;
`frame_skip`: MuJoCo and Atari envs; `reward_range` where an env still declares it); a fact an env
does not expose is left out, never guessed.
"""

from __future__ import annotations

from typing import Any


def physics_facts(env: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    inner = getattr(env, "unwrapped", env)
    for key, attrs in (("dt", ("dt", "tau")), ("frame skip", ("frame_skip", "_frameskip"))):
        for attr in attrs:
            try:
                value = getattr(inner, attr, None)
            except Exception:  # a property that needs a running simulation
                value = None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                facts[key] = value
                break
    reward_range = getattr(inner, "reward_range", None)
    if reward_range is not None:
        facts["reward range"] = str(tuple(reward_range))
    return facts
