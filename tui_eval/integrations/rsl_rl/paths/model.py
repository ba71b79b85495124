"""An rsl_rl checkpoint's models, as the kind and the paths both need them.

Reading a `model_<it>.pt` (plain tensors only), mapping rsl_rl < 4's `model_state_dict` to the 5.x
actor/critic layout, filling a runner cfg's `obs_groups` for an env, building models without rsl_rl's
prints, and reading the activation an exported TorchScript policy was built with.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tui_eval.errors import BadInput, first_line

DEFAULT_ACTIVATION = "elu"  # rsl_rl.models.MLPModel's default
_TORCH_ACTIVATIONS = {"ELU": "elu", "SELU": "selu", "ReLU": "relu", "CELU": "crelu", "LeakyReLU": "lrelu",
                      "Tanh": "tanh", "Sigmoid": "sigmoid", "Softplus": "softplus", "GELU": "gelu",
                      "SiLU": "swish", "Mish": "mish", "Identity": "identity"}


def load_checkpoint(path: Path) -> dict[str, Any]:
    import torch

    try:
        data = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises anything from pickle, zipfile and its own loader
        raise BadInput(f"{path} is not a readable torch checkpoint of plain tensors ({first_line(exc, 120)}); "
                       "pass an rsl_rl "
                       "model_<iteration>.pt saved by OnPolicyRunner.save") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path} holds a {type(data).__name__}, not an rsl_rl checkpoint (a dict with "
                       "actor_state_dict); pass a model_<iteration>.pt saved by OnPolicyRunner.save")
    return data


def is_state_dict(value: Any) -> bool:
    import torch

    return isinstance(value, dict) and bool(value) and all(isinstance(v, torch.Tensor) for v in value.values())


def map_pre4(data: dict[str, Any], path: Path) -> tuple[dict, dict]:
    """rsl_rl < 4 `model_state_dict` (an ActorCritic or ActorCriticRecurrent) → (actor, critic) state dicts of
    5.x MLPModels or RNNModels (`memory_a.rnn.*` → the actor's `rnn.rnn.*`, `memory_c.` the critic's)."""
    model = data["model_state_dict"]
    keys = list(model)
    if any(k.startswith(("student.", "teacher.")) for k in keys):
        raise BadInput(f"{path} is a pre-4.0 rsl_rl distillation checkpoint (student/teacher); tui-eval "
                       "evaluates PPO actor-critic checkpoints")
    actor: dict[str, Any] = {}
    critic: dict[str, Any] = {}
    unknown = []
    for key, value in model.items():
        head, _, rest = key.partition(".")
        if head == "actor" and rest.split(".")[0].isdigit():
            actor[f"mlp.{rest}"] = value
        elif head == "critic" and rest.split(".")[0].isdigit():
            critic[f"mlp.{rest}"] = value
        elif head == "memory_a" and rest.startswith("rnn."):
            actor[f"rnn.{rest}"] = value
        elif head == "memory_c" and rest.startswith("rnn."):
            critic[f"rnn.{rest}"] = value
        elif key == "std":
            actor["distribution.std_param"] = value
        elif key == "log_std":
            actor["distribution.log_std_param"] = value
        elif head == "actor_obs_normalizer":
            actor[f"obs_normalizer.{rest}"] = value
        elif head == "critic_obs_normalizer":
            critic[f"obs_normalizer.{rest}"] = value
        else:
            unknown.append(key)
    if unknown or not actor:
        raise BadInput(f"{path} is a pre-4.0 rsl_rl checkpoint (model_state_dict) whose layers tui-eval cannot "
                       f"map ({', '.join(unknown[:3]) or 'no actor.N layers'}); re-save it with rsl-rl-lib >= 4")
    # rsl_rl 2.x kept the empirical normalizers outside the model
    for source, target in (("obs_norm_state_dict", actor), ("privileged_obs_norm_state_dict", critic)):
        if is_state_dict(data.get(source)):
            target.update({f"obs_normalizer.{k}": v for k, v in data[source].items()})
    return actor, critic


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """rsl_rl prints the models and the resolved observation sets; keep them off the user's terminal."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def finalise_obs_groups(cfg: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    """Fill the runner cfg's `obs_groups` for the env's observation groups, as rsl_rl would but silently.

    Isaac Lab before rsl_rl 4 named the actor's set "policy"; it is read as "actor". A missing set takes
    the group of its own name, else "policy", else every group the env has.
    """
    obs_groups = {k: list(v) for k, v in (cfg.get("obs_groups") or {}).items()}
    if "actor" not in obs_groups and "policy" in obs_groups:
        obs_groups["actor"] = obs_groups.pop("policy")
    for name in ("actor", "critic"):
        if name not in obs_groups:
            obs_groups[name] = [name] if name in groups else ["policy"] if "policy" in groups else list(groups)
        absent = [g for g in obs_groups[name] if g not in groups]
        if absent:
            raise BadInput(f"the agent cfg's obs_groups[{name!r}] names {absent}, which the env does not give "
                           f"(it gives {groups}); fix obs_groups or pass the right --env / --vecenv")
    cfg["obs_groups"] = obs_groups
    return cfg


def activation_of_export(exported: Path) -> str | None:
    """The activation a TorchScript `exported/policy.pt` was built with (the weights do not tell)."""
    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = torch.jit.load(str(exported), map_location="cpu")
        names = [child.original_name for child in module.mlp.children()]
    except Exception:  # any failure means: the export does not tell
        return None
    found = [_TORCH_ACTIVATIONS[n] for n in names if n in _TORCH_ACTIVATIONS]
    return found[0] if found else None


def model_class(block: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(class, keyword arguments) of an actor or critic cfg block, as the installed rsl_rl builds it: its
    `resolve_class` (5.5 on), else `resolve_callable` of the class name (5.0 to 5.4, which mjlab pins)."""
    import rsl_rl.utils

    resolve_class = getattr(rsl_rl.utils, "resolve_class", None)
    if resolve_class is None:
        cls = rsl_rl.utils.resolve_callable(block["class_name"])
        return cls, {k: v for k, v in block.items() if k != "class_name"}
    return resolve_class(block)
