"""Which of a module's weights can change what the path does: those the action distribution's inputs depend on.

A weight no action depends on (a value head, a critic's encoder) may differ between paths without any path acting
otherwise; reporting it as a cause would send the user after nothing. Whether an action depends on a weight is
told the way autograd tells it: the path's module runs its own forward (inference or exploration, as the path
does) on a real first observation passed through the path's own env-to-module pipeline, and the weights the
backward pass from the action distribution's inputs never reaches cannot change an action, on this step or any
other (the graph is the module's, not the observation's). Where this cannot be told (no module, no env, a forward
that runs without autograd), every weight counts as acting.
"""

from __future__ import annotations

import copy
from typing import Any


def idle_weights(module: Any, env_to_module: Any, make_env: Any, explore: bool) -> set[str]:
    """Names of `module`'s parameters that no action depends on (empty when it cannot be told)."""
    if module is None or make_env is None or not hasattr(module, "named_parameters"):
        return set()
    try:
        batch = _first_batch(module, env_to_module, make_env, explore)
        return _unreached(module, batch, explore)
    except Exception:  # a module or pipeline this cannot drive: every weight counts as acting
        return set()


def _first_batch(module: Any, env_to_module: Any, make_env: Any, explore: bool) -> dict[str, Any]:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode

    env = make_env()
    try:
        obs, _ = env.reset(seed=0)
        spaces = env.observation_space, env.action_space
    finally:
        env.close()
    if env_to_module is None:
        return {Columns.OBS: torch.as_tensor(obs)[None]}
    episode = SingleAgentEpisode(observation_space=spaces[0], action_space=spaces[1])
    episode.add_env_reset(observation=obs)
    return copy.deepcopy(env_to_module)(rl_module=module, episodes=[episode], batch={}, explore=explore,
                                        shared_data={})


def _unreached(module: Any, batch: dict[str, Any], explore: bool) -> set[str]:
    import torch
    from ray.rllib.core.columns import Columns

    params = dict(module.named_parameters())
    wanted = {name: p.requires_grad for name, p in params.items()}
    try:
        for p in params.values():
            p.requires_grad_(True)
            p.grad = None
        with torch.enable_grad():
            inputs = _action_forward(module, batch, explore)[Columns.ACTION_DIST_INPUTS]
            if inputs.grad_fn is None:  # a forward of the user's own that turns autograd off: cannot tell
                return set()
            inputs.float().sum().backward()
        reached = {name for name, p in params.items() if p.grad is not None}
    finally:
        for name, p in params.items():
            p.grad = None
            p.requires_grad_(wanted[name])
    return set(params) - reached if reached else set()  # nothing reached: a forward without autograd


def _action_forward(module: Any, batch: dict[str, Any], explore: bool) -> dict[str, Any]:
    """The module's inference (or exploration) forward with autograd on: RLlib's default one is its `_forward`
    under `torch.no_grad()`, so that `_forward` is called; a module's own override is called as it is."""
    from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule

    method = "_forward_exploration" if explore else "_forward_inference"
    if getattr(type(module), method, None) is getattr(TorchRLModule, method):
        return module._forward(batch)
    return getattr(module, method)(batch)
