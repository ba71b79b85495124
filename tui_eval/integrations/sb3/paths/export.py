"""SB3's documented ONNX export ("Exporting models" in the SB3 docs), as a user follows it, into tui-eval's cache.

The recipe wraps the policy's deterministic forward and exports it with `torch.onnx.export(..., opset_version=17,
dynamo=False)` on a dummy observation of batch 1:

- PPO, A2C: `policy(obs, deterministic=True)` -> actions, values, log_prob (the action is the first output);
- SAC: `policy.actor(obs, deterministic=True)`; TD3: `policy.actor(obs)`;
- DQN: the Q-network's greedy action (`policy.q_net._predict(obs, deterministic=True)`).

A model of Dict observations (MultiInputPolicy) is exported with one graph input per key, named by the key, in
the observation space's key order: the onnx path feeds each part by its name.

What the recipe leaves out is what a deployment loses: the graph holds no VecNormalize (raw observations go in)
and no action unscaling or clipping (PPO's Gaussian mean comes out unclipped, SAC's and TD3's tanh output in
[-1, 1]). tui-eval writes the file as the recipe does, so that the `onnx` path shows what such an export does.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import warnings
from pathlib import Path
from typing import Any

from tui_eval.errors import BadInput, first_line
from tui_eval.paths.cache import cache_root

RECIPE = "SB3's documented ONNX export (torch.onnx.export, opset 17, dynamo=False)"


def export_path(model_path: Path) -> Path:
    """Where tui-eval keeps its export of `model_path`, keyed by the zip's bytes."""
    digest = hashlib.sha256(model_path.read_bytes()).hexdigest()[:16]
    return cache_root() / "sb3" / digest / "policy.onnx"


def dict_keys(space: Any) -> tuple[str, ...]:
    """A Dict observation space's keys in its order (the graph's inputs), () for any other space."""
    import gymnasium as gym

    return tuple(space.spaces) if isinstance(space, gym.spaces.Dict) else ()


def _module(model: Any, algo: str) -> Any:
    import torch

    policy = model.policy
    keys = dict_keys(model.observation_space)

    class Onnxable(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.policy = policy

        def forward(self, *parts: torch.Tensor) -> Any:
            # a Dict observation comes in as one tensor per key (ONNX inputs are tensors), rebuilt here
            obs: Any = dict(zip(keys, parts)) if keys else parts[0]
            if algo in ("ppo", "a2c"):
                return self.policy(obs, deterministic=True)
            if algo == "sac":
                return self.policy.actor(obs, deterministic=True)
            if algo == "td3":
                return self.policy.actor(obs)
            return self.policy.q_net._predict(obs, deterministic=True)

    return Onnxable().eval()


def export(model: Any, algo: str, model_path: Path) -> Path:
    """The cached export of `model` (written once, then reused)."""
    import torch

    target = export_path(model_path)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".staging-{os.getpid()}.onnx")
    space = model.observation_space
    keys = dict_keys(space)
    dummy = tuple(torch.zeros((1, *space[k].shape), dtype=torch.float32) for k in keys) if keys else \
        (torch.zeros((1, *space.shape), dtype=torch.float32),)
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:  # the exporter warns about tracing; not the user's business
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            torch.onnx.export(_module(model, algo), dummy, str(staging), opset_version=17, dynamo=False,
                              input_names=list(keys) or ["input"])
        os.replace(staging, target)
    except Exception as exc:  # torch.onnx raises errors of many classes
        raise BadInput(f"SB3's ONNX recipe could not export this {algo.upper()} policy: {first_line(exc, 180)}") \
            from None
    finally:
        logger.setLevel(level)
        staging.unlink(missing_ok=True)
    return target
