"""Frames of a MultiAgentEnv, for the frame viewer and `tui-eval record`: what the frame hub reads of an env
(`metadata["render_modes"]`, `render_mode`, `render()`; tui_eval/frames/hub.py) as a MultiAgentGuardedEnv
presents it.

A MultiAgentEnv renders as its author wrote `render()`. One made without a render mode gets rgb_array for the
render call only, as a single-agent env does (its steps run unrendered): set on the env itself, and on each
sub-env of an env built by RLlib's `make_multi_agent` (MultiAgentCartPole: one Gymnasium env per agent in
`envs`, made without a render mode, whose pictures its `render()` puts side by side).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

RGB = "rgb_array"


def _sub_envs(env: Any) -> list[Any]:
    """The per-agent Gymnasium envs of a `make_multi_agent` env ([] for any other MultiAgentEnv)."""
    import gymnasium as gym

    found = getattr(env.unwrapped, "envs", None)
    if not isinstance(found, list) or not found or not all(isinstance(e, gym.Env) for e in found):
        return []
    return found


def _modes(env: Any) -> list[str]:
    return list((getattr(env, "metadata", None) or {}).get("render_modes") or [])


def render_modes(env: Any) -> list[str]:
    """The render modes `env` offers: its own, and rgb_array when every one of its sub-envs renders rgb_array."""
    modes = _modes(env)
    subs = _sub_envs(env)
    if RGB not in modes and subs and all(RGB in _modes(sub) for sub in subs):
        modes.append(RGB)
    return modes


@contextlib.contextmanager
def _rgb_mode(targets: list[Any]) -> Iterator[None]:
    before = [t.render_mode for t in targets]
    for target in targets:
        target.render_mode = RGB
    try:
        yield
    finally:
        for target, mode in zip(targets, before):
            target.render_mode = mode


def render_rgb(env: Any) -> Any:
    """One rgb_array picture of `env`, its render mode (and its sub-envs') rgb_array for this call only."""
    targets = [t for t in (env.unwrapped, *(sub.unwrapped for sub in _sub_envs(env)))
               if getattr(t, "render_mode", RGB) != RGB]
    with _rgb_mode(targets):
        return env.render()
