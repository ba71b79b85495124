"""RLlib's stock connector pipelines, applied to the whole batch at once.

RLlib's default EnvToModule and ModuleToEnv pipelines run generic per-item code on every step (tree
walks, deep copies, one unsquash call per env); for a small policy they cost several times the env
step and the forward pass together. When a checkpoint's pipelines hold only the stock pieces and the
observations are one Box, their combined effect is a handful of batched calls to the same RLlib
functions the pieces use: `convert_to_torch_tensor`, the module's action distribution (`from_logits`,
`to_deterministic`, `sample`), `convert_to_numpy`, `unsquash_action` / `clip_action`. A recurrent
module's stock state pieces are kept as a batch of state tensors: AddStatesFromEpisodesToBatch gives
an episode's first step `get_initial_state()` and every later one the STATE_OUT of its previous step
(through numpy and back: the same float32 values), AddTimeDimToBatchAndZeroPad puts a time axis of
one on the observations, RemoveSingleTsTimeRankFromBatch takes it off the actions. Anything else (any
other piece, RLlib's or the user's; structured observations or actions) runs the pipelines step by step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STOCK_ENV_TO_MODULE = {
    "AddObservationsFromEpisodesToBatch", "AddTimeDimToBatchAndZeroPad", "AddStatesFromEpisodesToBatch",
    "BatchIndividualItems", "NumpyToTensor",
}
STOCK_MODULE_TO_ENV = {
    "GetActions", "TensorToNumpy", "UnBatchToIndividualItems", "RemoveSingleTsTimeRankFromBatch",
    "NormalizeAndClipActions", "ListifyDataForVectorEnv",
}


def why_not_fusable(env_to_module, module_to_env, module, observation_space, action_space=None) -> str | None:
    """None when the pipelines can be fused; else a short reason for running them generically."""
    import gymnasium as gym

    for pipeline, stock in ((env_to_module, STOCK_ENV_TO_MODULE), (module_to_env, STOCK_MODULE_TO_ENV)):
        for connector in pipeline.connectors:
            if type(connector).__name__ not in stock:
                return f"non-stock connector {type(connector).__name__}"
    if not isinstance(observation_space, gym.spaces.Box):
        return f"{type(observation_space).__name__} observations"
    if action_space is not None and not isinstance(action_space, (gym.spaces.Box, gym.spaces.Discrete)):
        return f"{type(action_space).__name__} actions"  # per-item unsquashing of structures: not batched here
    return None


class FusedPipelines:
    """obs batch -> (actions as the module sampled them, actions for the env), as the stock pipelines do."""

    def __init__(self, module, module_to_env, device):
        import gymnasium as gym
        from ray.rllib.core.columns import Columns
        from ray.rllib.utils.numpy import convert_to_numpy
        from ray.rllib.utils.spaces.space_utils import clip_action, get_base_struct_from_space, unsquash_action
        from ray.rllib.utils.torch_utils import convert_to_torch_tensor

        self.module = module
        self.device = device
        normalize = [c for c in module_to_env.connectors if type(c).__name__ == "NormalizeAndClipActions"]
        self.normalize_actions = bool(normalize and normalize[0].normalize_actions)
        self.clip_actions = bool(normalize and normalize[0].clip_actions)
        self.action_struct = None
        if normalize:  # the action space as that connector sees it, as it computes it
            self.action_struct = normalize[0]._action_space_struct or get_base_struct_from_space(
                normalize[0].input_action_space)
        self._change = None if self.action_struct is None else unsquash_action if self.normalize_actions \
            else clip_action if self.clip_actions else None
        # unsquash_action / clip_action change Box actions only; a Discrete one they hand back as it is
        if isinstance(self.action_struct, gym.spaces.Discrete):
            self._change = None
        self._dist = {True: module.get_exploration_action_dist_cls(), False: module.get_inference_action_dist_cls()}
        self._greedy = _greedy_shortcut(self._dist[False])
        self._to_tensor, self._to_numpy = convert_to_torch_tensor, convert_to_numpy
        self._obs, self._state_in, self._state_out = Columns.OBS, Columns.STATE_IN, Columns.STATE_OUT
        self._actions, self._dist_inputs = Columns.ACTIONS, Columns.ACTION_DIST_INPUTS
        self.stateful = bool(module.is_stateful())
        self.state: Any = None  # STATE_OUT of the last call, one row per env (recurrent modules)
        self._initial: Any = None
        if self.stateful:  # as AddStatesFromEpisodesToBatch gives it: through numpy, then NumpyToTensor
            self._initial = convert_to_torch_tensor(convert_to_numpy(module.get_initial_state()), device=device)

    def reset_state(self, rows: list[int] | None = None) -> None:
        """Rows (None: all) whose next observation starts an episode get the module's initial state."""
        import tree

        if not self.stateful:
            return
        if rows is None or self.state is None:
            self.state = None
        elif rows:
            def reset_rows(value, initial):
                value[rows] = initial

            tree.map_structure(reset_rows, self.state, self._initial)

    def _state_in_rows(self, batch_size: int) -> Any:
        import tree

        if self.state is None:
            return tree.map_structure(lambda v: v.unsqueeze(0).repeat(batch_size, *([1] * v.dim())), self._initial)
        return self.state

    def __call__(self, obs: np.ndarray, explore: bool, t: int) -> tuple[Any, Any]:
        import torch

        if type(obs) is np.ndarray and obs.dtype == np.float32 and self.device.type == "cpu":
            tensor = torch.from_numpy(obs)  # what convert_to_torch_tensor returns for it, without a tree walk
        else:
            tensor = self._to_tensor(obs, device=self.device)  # NumpyToTensor
        batch = {self._obs: tensor}
        if self.stateful:  # AddTimeDimToBatchAndZeroPad, AddStatesFromEpisodesToBatch
            batch = {self._obs: tensor.unsqueeze(1), self._state_in: self._state_in_rows(len(tensor))}
        with torch.no_grad():
            out = (self.module._forward_exploration(batch, t=t) if explore
                   else self.module._forward_inference(batch))
            if self.stateful:
                self.state = out[self._state_out]
            if self._actions in out:  # GetActions: a module that picks actions itself
                actions = out[self._actions]
            elif not explore and self._greedy is not None:
                actions = self._greedy(out[self._dist_inputs])
            else:
                dist = self._dist[explore].from_logits(out[self._dist_inputs])
                actions = (dist if explore else dist.to_deterministic()).sample()
        actions = actions.numpy() if type(actions) is torch.Tensor and actions.device.type == "cpu" \
            else self._to_numpy(actions)  # TensorToNumpy
        if self.stateful:  # RemoveSingleTsTimeRankFromBatch (actions are one array: Box or Discrete)
            actions = np.asarray(actions)[:, 0]
        if self._change is not None:  # NormalizeAndClipActions
            return actions, self._change(actions, self.action_struct)
        return actions, actions


def _greedy_shortcut(dist_cls):
    """`dist_cls.from_logits(x).to_deterministic().sample()` for RLlib's own categorical and diagonal
    Gaussian, computed as they compute it but without building the distribution objects (a third of
    the fused step for a small policy); None for any other distribution."""
    import torch
    from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical, TorchDiagGaussian

    if dist_cls is TorchCategorical:  # argmax of the logits it was given (kept as given, not normalised)
        return lambda x: torch.argmax(x, dim=-1)
    if dist_cls is TorchDiagGaussian:  # the mean: the first half of the inputs
        return lambda x: x.chunk(2, dim=-1)[0]
    return None
