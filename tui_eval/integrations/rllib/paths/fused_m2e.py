"""RLlib's stock module-to-env pipeline applied to the whole batch at once, for the step-by-step loop.

When a checkpoint's env-to-module pipeline holds a piece of its own (PrevActionsPrevRewards, MeanStdFilter,
FlattenObservations, a user's class), the env-to-module pipeline runs step by step on the episodes; its
module-to-env pipeline is often RLlib's stock one (GetActions, TensorToNumpy, UnBatchToIndividualItems,
RemoveSingleTsTimeRankFromBatch, NormalizeAndClipActions, ListifyDataForVectorEnv). Those pieces do
generic per-item work (tree walks, a deep copy of the actions, one unsquash call per env) that costs more
than the forward pass. `FusedModuleToEnv` returns what that pipeline returns, column by column and row
by row, from the same RLlib calls on the batch: the action distribution (`from_logits`, `to_deterministic`,
`sample`, `logp`), `convert_to_numpy`, `unbatch`, the time rank squeezed off each item as the piece does,
`unsquash_action` / `clip_action` on the stacked actions (elementwise: the same numbers as per item), also
on Dict/Tuple actions (one stacked array per leaf, unsquashed or clipped per Box leaf as per item).
Anything it does not know (another piece, another order, an action space with other leaves than Box,
Discrete, MultiDiscrete and MultiBinary, a batch without the memorized single-agent row order) runs the
real pipeline.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

STOCK_ORDER = ("GetActions", "TensorToNumpy", "UnBatchToIndividualItems", "RemoveSingleTsTimeRankFromBatch",
               "NormalizeAndClipActions", "ListifyDataForVectorEnv")
#: action spaces whose actions are one array per env (the pipeline's per-item work then has one leaf)
ARRAY_ACTIONS = ("Box", "Discrete", "MultiDiscrete", "MultiBinary")


def why_not_fusable_module_to_env(module_to_env, action_space) -> str | None:
    """None when `FusedModuleToEnv` stands for this pipeline; else why not, in a few words."""
    names = tuple(type(c).__name__ for c in module_to_env.connectors)
    if names != STOCK_ORDER:
        extra = [n for n in names if n not in STOCK_ORDER]
        return f"module-to-env connector {extra[0]}" if extra else "module-to-env pieces in another order"
    other = [name for name in _leaf_space_names(action_space) if name not in ARRAY_ACTIONS]
    return f"{other[0]} actions" if other else None


def _leaf_space_names(space) -> list[str]:
    """The class names of the spaces at the leaves of a (nested) Dict/Tuple space, or of the space itself."""
    name = type(space).__name__
    if name == "Dict":
        return [leaf for part in space.spaces.values() for leaf in _leaf_space_names(part)]
    if name == "Tuple":
        return [leaf for part in space.spaces for leaf in _leaf_space_names(part)]
    return [name]


class FusedModuleToEnv:
    """Called as the module-to-env pipeline is (keyword arguments), returns what it returns."""

    def __init__(self, module_to_env) -> None:
        import gymnasium as gym
        from ray.rllib.core.columns import Columns
        from ray.rllib.utils.spaces.space_utils import batch as batch_fn
        from ray.rllib.utils.spaces.space_utils import clip_action, get_base_struct_from_space, unsquash_action

        self.pipeline = module_to_env
        normalize = module_to_env.connectors[STOCK_ORDER.index("NormalizeAndClipActions")]
        self.normalize_actions, self.clip_actions = bool(normalize.normalize_actions), bool(normalize.clip_actions)
        # the action space as that connector sees it, as it computes it
        self.action_struct = normalize._action_space_struct or get_base_struct_from_space(
            normalize.input_action_space)
        self._change = unsquash_action if self.normalize_actions else clip_action if self.clip_actions else None
        # unsquash_action / clip_action change only Box parts: on one Discrete, MultiDiscrete or MultiBinary
        # space (a leaf of the struct) they hand the action back as it is
        self._unchanged = isinstance(self.action_struct, (gym.spaces.Discrete, gym.spaces.MultiDiscrete,
                                                          gym.spaces.MultiBinary))
        self._actions, self._for_env, self._state_out = Columns.ACTIONS, Columns.ACTIONS_FOR_ENV, Columns.STATE_OUT
        self._dist_inputs, self._logp = Columns.ACTION_DIST_INPUTS, Columns.ACTION_LOGP
        self._batch = batch_fn

    def __call__(self, *, rl_module, batch: dict[str, Any], episodes, explore: bool, shared_data: dict,
                 **kwargs) -> dict[str, Any]:
        if not isinstance(shared_data.get("memorized_map_structure"), list):  # rows not in RLlib's known order
            return self.pipeline(rl_module=rl_module, batch=batch, episodes=episodes, explore=explore,
                                 shared_data=shared_data, **kwargs)
        if not explore and len(batch) == 1 and "_added_single_ts_time_rank" not in shared_data:
            greedy = self._greedy(batch, rl_module)
            if greedy is not None:
                return greedy
        batch = actions_as_numpy(batch, rl_module, explore)  # GetActions, TensorToNumpy
        squeeze = bool(shared_data.get("_added_single_ts_time_rank")) and rl_module.is_stateful()
        out: dict[str, Any] = {}
        for column, data in batch.items():  # UnBatchToIndividualItems, RemoveSingleTsTimeRankFromBatch
            if column == self._actions:
                out[column] = self._restacked(data, squeeze)
                continue
            rows = list(data) if type(data) is np.ndarray else unbatch_rows(data)
            if squeeze and column != self._state_out:
                rows = [squeeze_first(row) for row in rows]
            out[column] = rows
        if self._change is not None:  # NormalizeAndClipActions
            actions = _copied(out[self._actions])
            out[self._for_env] = actions if self._unchanged else self._change(actions, self.action_struct)
        return out

    def _greedy(self, batch: dict[str, Any], rl_module) -> dict[str, Any] | None:
        """What the general case below returns for the most common batch: greedy actions from only the action
        distribution inputs, as one tensor of RLlib's own categorical or diagonal Gaussian, without a time rank;
        None for any other."""
        import torch

        inputs = batch.get(self._dist_inputs)
        if inputs is None or type(inputs) is not torch.Tensor:
            return None
        loc = _greedy_loc(rl_module.get_inference_action_dist_cls(), inputs)
        if loc is None:
            return None
        actions = tensor_to_numpy(loc)
        if type(actions) is not np.ndarray:  # a 0-d tensor: .item()
            return None
        out = {self._dist_inputs: list(tensor_to_numpy(inputs)), self._actions: actions.copy(),
               self._logp: zero_rows(actions)}
        if self._change is not None:
            for_env = actions.copy()
            out[self._for_env] = for_env if self._unchanged else self._change(for_env, self.action_struct)
        return out

    def _restacked(self, actions, squeeze: bool):
        """The actions as ListifyDataForVectorEnv stacks them again (RLlib's `batch` of the rows that
        UnBatchToIndividualItems and RemoveSingleTsTimeRankFromBatch made): of one array, or of a Dict/Tuple
        of arrays with one row each per env, the same numbers in new arrays (`batch` stacks each leaf's rows:
        numpy scalars of a 1-d leaf into an array of their dtype), in the same containers (`unbatch` and
        `batch` rebuild each row's and the result's from the actions' own, keys in their order)."""
        import tree

        if type(actions) is np.ndarray:
            return np.squeeze(actions, axis=1).copy() if squeeze else actions.copy()
        leaves = tree.flatten(actions)
        if isinstance(actions, (dict, tuple)) and leaves \
                and all(type(leaf) is np.ndarray and leaf.ndim >= 1 + squeeze for leaf in leaves) \
                and len({len(leaf) for leaf in leaves}) == 1:
            return tree.map_structure(lambda leaf: (np.squeeze(leaf, axis=1) if squeeze else leaf).copy(), actions)
        rows = unbatch_rows(actions)  # anything else: what the pieces do, row by row
        return self._batch([squeeze_first(row) for row in rows] if squeeze else rows)


def zero_rows(actions: np.ndarray) -> list:
    """`list(np.zeros(actions.shape, dtype=actions.dtype))`: of 1-d actions, one numpy zero scalar repeated (they are
    immutable, so sharing one is the same); of more dimensions, an array per row as that makes."""
    if actions.ndim == 1:
        return [np.zeros((), dtype=actions.dtype)[()]] * len(actions)
    return list(np.zeros(actions.shape, dtype=actions.dtype))


def actions_as_numpy(batch: dict[str, Any], module, explore: bool) -> dict[str, Any]:
    """GetActions then TensorToNumpy on one module's batch. Greedy actions from RLlib's own categorical or
    diagonal Gaussian go straight to numpy: TorchDeterministic's `sample()` is `ones * loc` (the values of
    `loc`, its dtype) and its `logp()` is `zeros_like(loc)`, which TensorToNumpy narrows as any array."""
    from ray.rllib.core.columns import Columns

    if explore or Columns.ACTIONS in batch or Columns.ACTION_DIST_INPUTS not in batch:
        _get_actions(batch, module, explore)
        return to_numpy(batch)
    dist_class = module.get_inference_action_dist_cls()
    loc = _greedy_loc(dist_class, batch[Columns.ACTION_DIST_INPUTS])
    if loc is None:
        _get_actions(batch, module, explore)
        return to_numpy(batch)
    out = to_numpy(batch)
    out[Columns.ACTIONS] = tensor_to_numpy(loc)
    if Columns.ACTION_LOGP not in out:
        actions = out[Columns.ACTIONS]
        out[Columns.ACTION_LOGP] = np.zeros(actions.shape, dtype=actions.dtype)
    return out


def _get_actions(batch: dict[str, Any], module, explore: bool) -> None:
    """GetActions on one module's batch: actions (and their logp) from the action distribution inputs."""
    from ray.rllib.core.columns import Columns

    if Columns.ACTIONS in batch or Columns.ACTION_DIST_INPUTS not in batch:
        return
    dist_class = module.get_exploration_action_dist_cls() if explore else module.get_inference_action_dist_cls()
    inputs = batch[Columns.ACTION_DIST_INPUTS]
    dist = None if explore else _deterministic(dist_class, inputs)
    if dist is None:
        dist = dist_class.from_logits(inputs)
        if not explore:
            dist = dist.to_deterministic()
    actions = dist.sample()
    batch[Columns.ACTIONS] = actions
    if Columns.ACTION_LOGP not in batch:
        batch[Columns.ACTION_LOGP] = dist.logp(actions)


def _deterministic(dist_class, inputs):
    """`dist_class.from_logits(inputs).to_deterministic()` for RLlib's own categorical and diagonal Gaussian, and
    Dict/Tuple structs of them, without building the torch distributions first (their logits normalisation is
    not used by it); None for any other class."""
    from ray.rllib.core.distribution.torch.torch_distribution import TorchDeterministic

    loc = _greedy_loc(dist_class, inputs)
    return TorchDeterministic(loc=loc) if loc is not None else _greedy_multi(dist_class, inputs)


def _greedy_multi(dist_class, inputs):
    """`dist_class.from_logits(inputs).to_deterministic()` for the TorchMultiDistribution of a Dict/Tuple action
    space (RLlib's partial class of it) whose children are RLlib's own categorical and diagonal Gaussian: the
    inputs split as its `from_logits` splits them (`tree.flatten` of `input_lens` and of the children's
    classes), a TorchDeterministic per child at `_greedy_loc`, in the children's struct; its `sample()` and
    `logp()` are then RLlib's own. None for any other class."""
    import torch
    import tree
    from ray.rllib.core.distribution.torch.torch_distribution import TorchDeterministic, TorchMultiDistribution

    if getattr(dist_class, "__bases__", ()) != (TorchMultiDistribution,) or not hasattr(dist_class, "_merge_kwargs"):
        return None
    kwargs = dist_class._merge_kwargs()
    classes = tree.flatten(kwargs["child_distribution_cls_struct"])
    locs = [_greedy_loc(cls, part) for cls, part in
            zip(classes, torch.split(inputs, tree.flatten(kwargs["input_lens"]), dim=-1))]
    if any(loc is None for loc in locs):
        return None
    return TorchMultiDistribution(tree.unflatten_as(kwargs["child_distribution_cls_struct"],
                                                    [TorchDeterministic(loc=loc) for loc in locs]))


def _greedy_loc(dist_class, inputs):
    """The `loc` of `dist_class.from_logits(inputs).to_deterministic()` for RLlib's own categorical (argmax of
    the logits as given) and diagonal Gaussian (the first half of the inputs); None for any other class."""
    import torch

    categorical, gaussian = _greedy_classes()
    if dist_class is categorical:
        return torch.argmax(inputs, dim=-1)
    if dist_class is gaussian:
        return inputs.chunk(2, dim=-1)[0]
    return None


@functools.cache
def _greedy_classes() -> tuple[type, type]:
    from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical, TorchDiagGaussian

    return TorchCategorical, TorchDiagGaussian


def to_numpy(batch: dict[str, Any]) -> dict[str, Any]:
    """RLlib's `convert_to_numpy(batch)` (TensorToNumpy), its per-leaf tree walk short-cut for columns that
    are one tensor: the same `.detach().cpu().numpy()`, `.item()` of a 0-d one, and the same narrowing of
    floats to float32 and signed integers to int32."""
    import torch
    from ray.rllib.utils.numpy import convert_to_numpy

    out = {}
    for column, value in batch.items():
        if type(value) is torch.Tensor:
            out[column] = tensor_to_numpy(value)
        elif type(value) is dict and all(type(v) is torch.Tensor for v in value.values()):  # a recurrent state
            out[column] = {key: tensor_to_numpy(v) for key, v in value.items()}
        else:
            out[column] = convert_to_numpy(value)
    return out


def tensor_to_numpy(value):
    """`convert_to_numpy` of one torch tensor: the same numbers (an array already of the narrowed dtype is
    not copied)."""
    if value.dim() == 0:
        return value.cpu().item()
    array = value.numpy() if value.is_cpu and not value.requires_grad else value.detach().cpu().numpy()
    target = _NARROWED.get(array.dtype)
    if target is None:
        target = _NARROWED[array.dtype] = _narrowed(array.dtype)
    return array.astype(target, copy=False) if target is not False else array


_NARROWED: dict = {}


def _narrowed(dtype):
    """convert_to_numpy's reduce_type rule for one dtype: the dtype it casts to, or False for none."""
    if np.issubdtype(dtype, np.floating):
        return np.float32
    if np.issubdtype(dtype, int):
        return np.int32
    return False


def unbatch_rows(data):
    if isinstance(data, np.ndarray):
        return list(data)  # what RLlib's unbatch gives for one array: its rows, in order
    if type(data) is dict and data and all(type(v) is np.ndarray for v in data.values()) \
            and len({len(v) for v in data.values()}) == 1:  # a dict of arrays: a dict per row, in its key order
        rows = len(next(iter(data.values())))
        return [{key: v[i] for key, v in data.items()} for i in range(rows)]
    from ray.rllib.utils.spaces.space_utils import unbatch

    return unbatch(data)


def _copied(actions):
    """A copy of each array of the actions (NormalizeAndClipActions changes a deep copy of them)."""
    if type(actions) is np.ndarray:
        return actions.copy()
    import tree

    return tree.map_structure(np.copy, actions)


def squeeze_first(item):
    if isinstance(item, np.ndarray):
        return np.squeeze(item, axis=0)
    import tree

    return tree.map_structure(lambda s: np.squeeze(s, axis=0), item)
