"""rsl_rl runner cfgs as plain dicts: read one, normalise any layout we know to 5.x, or infer one from weights.

Pure dict → dict functions (rsl_rl's classes are looked up only to know which keys they take).
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from pathlib import Path
from typing import Any

from tui_eval.errors import BadInput, first_line
from tui_eval.integrations.rsl_rl.paths.model import DEFAULT_ACTIVATION

DEFAULT_NUM_STEPS_PER_ENV = 24
_DEPRECATED_MODEL_KEYS = ("stochastic", "init_noise_std", "noise_std_type", "state_dependent_std")
_TRAINING_ONLY_ALGORITHM_KEYS = ("rnd_cfg", "symmetry_cfg")
KNOWN_CLASSES = {"algorithm": "PPO"}
#: rsl_rl < 4 ActorCritic* classes (Isaac Lab's RslRlPpoActorCritic[Recurrent]Cfg) → the 5.x model class
_PRE4_POLICY_CLASSES = {"ActorCritic": "MLPModel", "ActorCriticRecurrent": "RNNModel",
                        "RslRlPpoActorCriticCfg": "MLPModel", "RslRlPpoActorCriticRecurrentCfg": "RNNModel"}


def bare_class_name(name: Any) -> str:
    """`rsl_rl.modules:ActorCritic` / `rsl_rl.modules.ActorCritic` → `ActorCritic`."""
    return str(name).rpartition(":")[2].rpartition(".")[2]


def safe_yaml_loader():
    """A SafeLoader that reads the `!!python/tuple` (and other python tags) Isaac Lab's dump_yaml may write."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def python_tag(loader, suffix, node):
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        value = loader.construct_scalar(node)
        return value or suffix.partition(":")[2]

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", python_tag)
    return Loader


def read_cfg_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise BadInput(f"cannot read the agent cfg {path} ({exc.strerror}); pass a readable YAML or JSON "
                       "file") from None
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.load(text, Loader=safe_yaml_loader())
    except Exception as exc:  # json and yaml raise their own error classes, yaml several
        raise BadInput(f"the agent cfg {path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'} "
                       f"({first_line(exc, 100)})") from None
    if not isinstance(data, dict):
        raise BadInput(f"the agent cfg {path} holds a {type(data).__name__}, not a mapping of runner settings")
    return data


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() in ("???", "MISSING"))


def _accepted(cls: Any, skip: tuple[str, ...] = ()) -> set[str] | None:
    """Keyword names `cls.__init__` takes (None: it takes **kwargs)."""
    params = inspect.signature(cls).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return {name for name in params if name not in skip}


def _resolve(name: str, what: str) -> Any:
    from rsl_rl.utils import resolve_callable

    try:
        return resolve_callable(name)
    except Exception:  # resolve_callable raises ImportError, AttributeError, ValueError
        raise BadInput(f"the agent cfg's {what} class {name!r} is not in rsl_rl nor importable; pass a cfg whose "
                       f"{what} is one of rsl_rl's ({KNOWN_CLASSES.get(what, 'MLPModel, RNNModel, CNNModel')}), "
                       "or make its module importable") from None


def _filter(block: dict[str, Any], cls: Any, where: str, notes: list[str], skip: tuple[str, ...] = ()) -> dict:
    accepted = _accepted(cls, skip)
    out = {"class_name": block["class_name"]}
    dropped = []
    for key, value in block.items():
        if key == "class_name":
            continue
        if accepted is not None and key not in accepted:
            if value not in (None, False, "", [], {}, ()):  # a key left at nothing changes nothing: not worth a note
                dropped.append(key)
        elif not _missing(value) or key == "distribution_cfg":
            out[key] = value
    if dropped:
        notes.append(f"{where}: ignored {', '.join(sorted(dropped))}")
    return out


def _model_block(block: dict[str, Any], where: str, notes: list[str]) -> dict[str, Any]:
    block = dict(block)
    block.setdefault("class_name", "MLPModel")
    name = str(block["class_name"])
    if bare_class_name(name) in _PRE4_POLICY_CLASSES:
        raise BadInput(f"the agent cfg's {where} block names {name}, an rsl_rl < 4 policy class; put it under "
                       "policy: (as Isaac Lab writes it) or name the 5.x class (MLPModel, RNNModel, CNNModel)")
    if _missing(block.get("rnn_type")) and "RNN" not in bare_class_name(name):  # an MLP's unused RNN defaults (mjlab)
        for key in ("rnn_type", "rnn_hidden_dim", "rnn_num_layers"):
            block.pop(key, None)
    if "rnn_hidden_size" in block and "rnn_hidden_dim" not in block:  # the rsl_rl 2.x spelling
        block["rnn_hidden_dim"] = block.pop("rnn_hidden_size")
    # rsl_rl 4.x keys → 5.x distribution_cfg
    old = {k: block.pop(k) for k in _DEPRECATED_MODEL_KEYS if k in block}
    if old and _missing(block.get("distribution_cfg")) and old.get("stochastic") is True:
        dist_name = "HeteroscedasticGaussianDistribution" if old.get("state_dependent_std") else "GaussianDistribution"
        block["distribution_cfg"] = {"class_name": dist_name, "init_std": float(old.get("init_noise_std") or 1.0),
                                     "std_type": old.get("noise_std_type") or "scalar"}
    if _missing(block.get("distribution_cfg")):
        block["distribution_cfg"] = None
    cls = _resolve(name, where)
    block = _filter(block, cls, where, notes, skip=("self", "obs", "obs_groups", "obs_set", "output_dim"))
    if isinstance(block.get("distribution_cfg"), dict):
        dist = dict(block["distribution_cfg"])
        dist.setdefault("class_name", "GaussianDistribution")
        dist_cls = _resolve(str(dist["class_name"]), f"{where} distribution")
        block["distribution_cfg"] = _filter(dist, dist_cls, f"{where}.distribution_cfg", notes,
                                            skip=("self", "output_dim"))
    return block


def _from_actor_critic(policy: dict[str, Any], empirical: bool) -> tuple[dict, dict]:
    """rsl_rl < 4 `policy:` block (ActorCritic, ActorCriticRecurrent; Isaac Lab's RslRlPpoActorCritic[Recurrent]Cfg)
    → 5.x actor and critic blocks (MLPModel, RNNModel)."""
    name = bare_class_name(policy.get("class_name", "ActorCritic"))
    if name not in _PRE4_POLICY_CLASSES:
        raise BadInput(f"the agent cfg's policy class {name!r} has no rsl_rl 5 counterpart tui-eval knows (it maps "
                       "ActorCritic and ActorCriticRecurrent); pass --agent-cfg with actor/critic blocks of "
                       "rsl_rl 5 (MLPModel, RNNModel or CNNModel)")
    activation = policy.get("activation", DEFAULT_ACTIVATION)
    dist = {"class_name": "HeteroscedasticGaussianDistribution" if policy.get("state_dependent_std")
            else "GaussianDistribution", "init_std": float(policy.get("init_noise_std", 1.0)),
            "std_type": policy.get("noise_std_type", "scalar")}
    model_class = _PRE4_POLICY_CLASSES[name]
    actor = {"class_name": model_class, "hidden_dims": list(policy.get("actor_hidden_dims", [256, 256, 256])),
             "activation": activation, "distribution_cfg": dist,
             "obs_normalization": bool(policy.get("actor_obs_normalization", empirical))}
    critic = {"class_name": model_class, "hidden_dims": list(policy.get("critic_hidden_dims", [256, 256, 256])),
              "activation": activation, "obs_normalization": bool(policy.get("critic_obs_normalization", empirical))}
    if model_class == "RNNModel":
        rnn = {"rnn_type": str(policy.get("rnn_type", "lstm")).lower(),
               "rnn_hidden_dim": int(policy.get("rnn_hidden_dim", policy.get("rnn_hidden_size", 256))),
               "rnn_num_layers": int(policy.get("rnn_num_layers", 1))}
        actor.update(rnn)
        critic.update(rnn)
    return actor, critic


def normalise_cfg(raw: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Any rsl_rl runner cfg we know (5.x, 4.x keys, < 4 `policy:` block, Isaac Lab's dump) → a 5.x runner cfg."""
    cfg = copy.deepcopy(raw)
    runner_class = str(cfg.get("class_name") or "OnPolicyRunner")
    if "Distillation" in runner_class:
        raise BadInput("the agent cfg is for a DistillationRunner; tui-eval evaluates PPO (OnPolicyRunner) policies")
    empirical = bool(cfg.pop("empirical_normalization", False) or False)
    if not isinstance(cfg.get("actor"), dict):
        if isinstance(cfg.get("policy"), dict):
            old_class = bare_class_name(cfg["policy"].get("class_name", "ActorCritic"))
            cfg["actor"], cfg["critic"] = _from_actor_critic(cfg.pop("policy"), empirical)
            notes.append(f"cfg: rsl_rl < 4 policy block ({old_class}) mapped to actor/critic "
                         f"{cfg['actor']['class_name']}")
        else:
            raise BadInput("the agent cfg has no actor block (rsl_rl >= 4) nor policy block (rsl_rl < 4); pass "
                           "the run's params/agent.yaml, or no --agent-cfg to infer the cfg from the weights")
    elif empirical:
        cfg["actor"].setdefault("obs_normalization", True)
    cfg["actor"] = _model_block(cfg["actor"], "actor", notes)
    critic: dict[str, Any] = cfg["critic"] if isinstance(cfg.get("critic"), dict) else {
        k: v for k, v in cfg["actor"].items() if k != "distribution_cfg"}
    if empirical:
        critic.setdefault("obs_normalization", True)
    cfg["critic"] = _model_block(critic, "critic", notes)
    algorithm = dict(cfg.get("algorithm") or {})
    algorithm.setdefault("class_name", "PPO")
    if str(algorithm["class_name"]) != "PPO":
        algo_cls = _resolve(str(algorithm["class_name"]), "algorithm")
        if "Distillation" in algo_cls.__name__:
            raise BadInput("the agent cfg's algorithm is Distillation; tui-eval evaluates PPO policies")
    else:
        from rsl_rl.algorithms import PPO

        algo_cls = PPO
    for key in _TRAINING_ONLY_ALGORITHM_KEYS:
        if not _missing(algorithm.pop(key, None)):
            notes.append(f"algorithm: {key} not built (training only)")
    cfg["algorithm"] = _filter(algorithm, algo_cls, "algorithm", notes,
                               skip=("self", "actor", "critic", "storage", "device", "multi_gpu_cfg"))
    if not isinstance(cfg.get("num_steps_per_env"), int) or cfg["num_steps_per_env"] < 1:
        cfg["num_steps_per_env"] = DEFAULT_NUM_STEPS_PER_ENV
    if not isinstance(cfg.get("obs_groups"), dict):
        cfg["obs_groups"] = {}
    cfg.pop("torch_compile_mode", None)
    return cfg


def _mlp_layers(sd: dict[str, Any], role: str, path: Path) -> list[tuple[int, Any]]:
    layers = sorted((int(m.group(1)), v) for k, v in sd.items() if (m := re.fullmatch(r"mlp\.(\d+)\.weight", k)))
    if not layers:
        raise BadInput(f"{path}: the {role} has no mlp.N.weight layers (not an rsl_rl MLPModel); pass --agent-cfg "
                       "for custom models")
    if [i for i, _ in layers] != list(range(0, 2 * len(layers), 2)):
        raise BadInput(f"{path}: the {role}'s layers {[i for i, _ in layers]} are not rsl_rl's Linear/activation "
                       "pattern; pass --agent-cfg")
    return layers


def _rnn_from_weights(sd: dict[str, Any], role: str, path: Path) -> dict[str, Any]:
    """rnn_type / rnn_hidden_dim / rnn_num_layers of an RNNModel's `rnn.rnn.*` weights (LSTM: 4 gates, GRU: 3)."""
    hh = {int(m.group(1)): v for k, v in sd.items() if (m := re.fullmatch(r"rnn\.rnn\.weight_hh_l(\d+)", k))}
    if not hh or 0 not in hh:
        raise BadInput(f"{path}: the {role}'s rnn.* weights are not an rsl_rl RNNModel's (no rnn.rnn.weight_hh_l0); "
                       "pass the run's params/agent.yaml with --agent-cfg")
    hidden = int(hh[0].shape[1])
    gates = int(hh[0].shape[0]) // hidden
    if gates not in (3, 4):
        raise BadInput(f"{path}: the {role}'s recurrent layer has {gates} gates, neither an LSTM (4) nor a GRU (3); "
                       "pass --agent-cfg")
    return {"rnn_type": "lstm" if gates == 4 else "gru", "rnn_hidden_dim": hidden, "rnn_num_layers": len(hh)}


def infer_cfg(actor_sd: dict[str, Any], critic_sd: dict[str, Any] | None, activation: str,
              num_actions: int | None, path: Path) -> dict[str, Any]:
    """A 5.x runner cfg that rebuilds these state dicts: MLPModel or RNNModel shapes (type, size and layers from
    the `rnn.*` weights), normalization, std parameterisation. CNN encoders are not inferred (their kernel
    sizes, strides and pooling are not all in the weights)."""
    for role, sd in (("actor", actor_sd), ("critic", critic_sd or {})):
        if any(k.startswith("cnns.") for k in sd):
            raise BadInput(f"{path}: the {role} has CNN encoders (a CNNModel), whose cfg the weights do not tell; "
                           "pass the run's params/agent.yaml with --agent-cfg")

    def block(sd: dict[str, Any], role: str) -> tuple[dict[str, Any], int]:
        layers = _mlp_layers(sd, role, path)
        dims = [int(w.shape[0]) for _, w in layers]
        out = {"class_name": "MLPModel", "hidden_dims": dims[:-1], "activation": activation,
               "obs_normalization": "obs_normalizer._mean" in sd}
        if any(k.startswith("rnn.") for k in sd):
            out = {**out, "class_name": "RNNModel", **_rnn_from_weights(sd, role, path)}
        return out, dims[-1]

    actor, out = block(actor_sd, "actor")
    if "distribution.std_param" in actor_sd:
        actor["distribution_cfg"] = {"class_name": "GaussianDistribution", "std_type": "scalar"}
    elif "distribution.log_std_param" in actor_sd:
        actor["distribution_cfg"] = {"class_name": "GaussianDistribution", "std_type": "log"}
    elif num_actions is not None and out == 2 * num_actions:
        raise BadInput(f"{path}: the actor outputs 2×{num_actions} values and has no std parameter: a "
                       "state-dependent Gaussian or a Beta distribution, which the weights do not tell apart; "
                       "pass the run's params/agent.yaml with --agent-cfg")
    else:
        actor["distribution_cfg"] = None
    critic = block(critic_sd, "critic")[0] if critic_sd else {k: v for k, v in actor.items() if k != "distribution_cfg"}
    return {"num_steps_per_env": DEFAULT_NUM_STEPS_PER_ENV, "obs_groups": {},
            "actor": actor, "critic": critic, "algorithm": {"class_name": "PPO"}}


def env_from_cfg(raw: dict[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
    if not raw:
        return None, {}
    value = raw.get("tui_eval_env")
    if isinstance(value, str):
        return value, {}
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return value["id"], dict(value.get("config") or {})
    for key in ("env_id", "env"):
        if isinstance(raw.get(key), str) and raw[key]:
            return raw[key], {}
    return None, {}


def describe_model(block: dict[str, Any]) -> str:
    dist = block.get("distribution_cfg")
    if isinstance(dist, dict):
        kind = dist.get("class_name", "GaussianDistribution").replace("Distribution", "")
        std = f" ({dist.get('std_type', 'scalar')} std)" if "Gaussian" in kind else ""
        out = f"{kind}{std}"
    else:
        out = "deterministic output"
    name = str(block.get("class_name", "MLPModel"))
    if "rnn_type" in block or bare_class_name(name) == "RNNModel":
        name += (f" ({str(block.get('rnn_type', 'lstm')).upper()}, {block.get('rnn_num_layers', 1)} layer(s) of "
                 f"{block.get('rnn_hidden_dim', 256)}; hidden state reset at each episode's start)")
    if isinstance(block.get("cnn_cfg"), dict):
        name += f" (CNN channels {_cnn_channels(block['cnn_cfg'])})"
    return (f"{name} {list(block.get('hidden_dims', []))} "
            f"{block.get('activation', DEFAULT_ACTIVATION)}, obs normalization "
            f"{'on' if block.get('obs_normalization') else 'off'}, {out}")


def _cnn_channels(cnn_cfg: dict[str, Any]) -> str:
    """The output channels of each CNN encoder of a cfg (one cfg for all image groups, or one per group)."""
    if all(isinstance(v, dict) for v in cnn_cfg.values()):
        return ", ".join(f"{group}: {list(c.get('output_channels', []))}" for group, c in cnn_cfg.items())
    return str(list(cnn_cfg.get("output_channels", [])))
