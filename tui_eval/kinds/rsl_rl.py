"""rsl_rl checkpoints (rsl-rl-lib 5.x `model_<it>.pt`, as `OnPolicyRunner.save` and Isaac Lab write them).

A checkpoint is a torch file holding `actor_state_dict`, `critic_state_dict`, `optimizer_state_dict`,
`iter`, `infos`; it is read here with `torch.load(weights_only=True)`. rsl_rl saves no config, so the
runner cfg is rebuilt from, in order:

1. `--agent-cfg FILE` (YAML or JSON: an rsl_rl runner cfg, or Isaac Lab's `params/agent.yaml`),
2. Isaac Lab's `params/agent.yaml` next to the run (the checkpoint's folder or its parent),
3. the state dict itself: hidden dims from the `mlp.N.weight` shapes, observation normalization from
   `obs_normalizer.*`, the Gaussian std parameterisation from `distribution.std_param` (scalar) or
   `distribution.log_std_param` (log). The activation is not in the weights: `--activation`, else the
   one an `exported/policy.pt` next to the checkpoint was built with, else rsl_rl's default (elu).

Cfgs of older layouts are mapped to the 5.x one (`policy:` ActorCritic blocks of rsl_rl < 4, the
`stochastic` / `init_noise_std` / `noise_std_type` keys of 4.x); keys a class does not take are
dropped and listed in `describe()`. Checkpoints of rsl_rl < 4 (`model_state_dict`, an `ActorCritic`)
are mapped to the actor/critic layout when they hold an MLP actor-critic. Recurrent and CNN policies
are not supported.

The env: `--env ID` (a registered Gymnasium env), else the cfg's `tui_eval_env` (an id, or
`{id: ..., config: {...}}`), `env_id` or `env` key; or `--vecenv module:function`, a factory of rsl_rl
VecEnvs (see paths/rsl_vecenv.py).
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import re
import warnings
from pathlib import Path
from typing import Any

from tui_eval.kinds.base import CheckpointKind
from tui_eval.paths.base import InferencePath
from tui_eval.spec import DEFAULT_NUM_ENVS, BadInput, RunSpec, SeedBlock

# Far above the seeds training uses (rsl_rl / Isaac Lab seed from the agent cfg's `seed`, 42 by default;
# tui-eval's Gymnasium adapter trains worlds on seeds counting up from it).
HELD_OUT_START = 1_000_000_000
DEFAULT_NUM_STEPS_PER_ENV = 24
DEFAULT_ACTIVATION = "elu"  # rsl_rl.models.MLPModel's default
CFG_NAMES = ("params/agent.yaml", "params/agent.yml", "params/agent.json")

_TORCH_ACTIVATIONS = {"ELU": "elu", "SELU": "selu", "ReLU": "relu", "CELU": "crelu", "LeakyReLU": "lrelu",
                      "Tanh": "tanh", "Sigmoid": "sigmoid", "Softplus": "softplus", "GELU": "gelu",
                      "SiLU": "swish", "Mish": "mish", "Identity": "identity"}
_DEPRECATED_MODEL_KEYS = ("stochastic", "init_noise_std", "noise_std_type", "state_dependent_std")
_TRAINING_ONLY_ALGORITHM_KEYS = ("rnd_cfg", "symmetry_cfg")


# ---------------------------------------------------------------------------------------------------- reading


def load_checkpoint(path: Path) -> dict[str, Any]:
    import torch

    try:
        data = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
        raise BadInput(f"{path} is not a readable torch checkpoint of plain tensors ({first}); pass an rsl_rl "
                       "model_<iteration>.pt saved by OnPolicyRunner.save") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path} holds a {type(data).__name__}, not an rsl_rl checkpoint (a dict with "
                       "actor_state_dict); pass a model_<iteration>.pt saved by OnPolicyRunner.save")
    return data


def _is_state_dict(value: Any) -> bool:
    import torch

    return isinstance(value, dict) and bool(value) and all(isinstance(v, torch.Tensor) for v in value.values())


def map_pre4(data: dict[str, Any], path: Path) -> tuple[dict, dict]:
    """rsl_rl < 4 `model_state_dict` (an ActorCritic) → (actor, critic) state dicts of 5.x MLPModels."""
    model = data["model_state_dict"]
    keys = list(model)
    if any(k.startswith(("memory_a.", "memory_c.", "memory_s.", "memory_t.")) for k in keys):
        raise BadInput(f"{path} is a pre-4.0 rsl_rl checkpoint of a recurrent policy (ActorCriticRecurrent); "
                       "recurrent policies are not supported")
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
        if _is_state_dict(data.get(source)):
            target.update({f"obs_normalizer.{k}": v for k, v in data[source].items()})
    return actor, critic


# ---------------------------------------------------------------------------------------------------- cfgs


def _safe_yaml_loader():
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

            data = yaml.load(text, Loader=_safe_yaml_loader())
    except Exception as exc:
        first = str(exc).strip().splitlines()[0][:100] if str(exc).strip() else type(exc).__name__
        raise BadInput(f"the agent cfg {path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'} "
                       f"({first})") from None
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
    except Exception:
        raise BadInput(f"the agent cfg's {what} class {name!r} is not in rsl_rl nor importable; pass a cfg for "
                       "rsl_rl's MLPModel / PPO, or make the module importable") from None


def _filter(block: dict[str, Any], cls: Any, where: str, notes: list[str], skip: tuple[str, ...] = ()) -> dict:
    accepted = _accepted(cls, skip)
    out = {"class_name": block["class_name"]}
    dropped = []
    for key, value in block.items():
        if key == "class_name":
            continue
        if accepted is not None and key not in accepted:
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
    if "RNN" in name or "Recurrent" in name:
        raise BadInput(f"the agent cfg's {where} is recurrent ({name}); recurrent policies are not supported")
    if "CNN" in name:
        raise BadInput(f"the agent cfg's {where} is a {name}; tui-eval runs MLP policies on flat observations")
    # rsl_rl 4.x keys → 5.x distribution_cfg
    old = {k: block.pop(k) for k in _DEPRECATED_MODEL_KEYS if k in block}
    if old and _missing(block.get("distribution_cfg")) and old.get("stochastic") is True:
        dist = "HeteroscedasticGaussianDistribution" if old.get("state_dependent_std") else "GaussianDistribution"
        block["distribution_cfg"] = {"class_name": dist, "init_std": float(old.get("init_noise_std") or 1.0),
                                     "std_type": old.get("noise_std_type") or "scalar"}
    if _missing(block.get("distribution_cfg")):
        block["distribution_cfg"] = None
    cls = _resolve(name, where)
    block = _filter(block, cls, where, notes, skip=("self", "obs", "obs_groups", "obs_set", "output_dim"))
    dist = block.get("distribution_cfg")
    if isinstance(dist, dict):
        dist = dict(dist)
        dist.setdefault("class_name", "GaussianDistribution")
        dist_cls = _resolve(str(dist["class_name"]), f"{where} distribution")
        block["distribution_cfg"] = _filter(dist, dist_cls, f"{where}.distribution_cfg", notes,
                                            skip=("self", "output_dim"))
    return block


def _from_actor_critic(policy: dict[str, Any], empirical: bool) -> tuple[dict, dict]:
    """rsl_rl < 4 `policy:` block (ActorCritic) → 5.x actor and critic blocks."""
    name = str(policy.get("class_name", "ActorCritic"))
    if "Recurrent" in name:
        raise BadInput(f"the agent cfg's policy is {name}; recurrent policies are not supported")
    if name != "ActorCritic":
        raise BadInput(f"the agent cfg's policy class {name!r} has no rsl_rl 5 counterpart tui-eval knows; "
                       "pass a cfg with actor/critic MLPModel blocks")
    activation = policy.get("activation", DEFAULT_ACTIVATION)
    dist = {"class_name": "HeteroscedasticGaussianDistribution" if policy.get("state_dependent_std")
            else "GaussianDistribution", "init_std": float(policy.get("init_noise_std", 1.0)),
            "std_type": policy.get("noise_std_type", "scalar")}
    actor = {"class_name": "MLPModel", "hidden_dims": list(policy.get("actor_hidden_dims", [256, 256, 256])),
             "activation": activation, "distribution_cfg": dist,
             "obs_normalization": bool(policy.get("actor_obs_normalization", empirical))}
    critic = {"class_name": "MLPModel", "hidden_dims": list(policy.get("critic_hidden_dims", [256, 256, 256])),
              "activation": activation, "obs_normalization": bool(policy.get("critic_obs_normalization", empirical))}
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
            cfg["actor"], cfg["critic"] = _from_actor_critic(cfg.pop("policy"), empirical)
            notes.append("cfg: rsl_rl < 4 policy block mapped to actor/critic")
        else:
            raise BadInput("the agent cfg has no actor block (rsl_rl >= 4) nor policy block (rsl_rl < 4); pass "
                           "the run's params/agent.yaml, or no --agent-cfg to infer the cfg from the weights")
    elif empirical:
        cfg["actor"].setdefault("obs_normalization", True)
    cfg["actor"] = _model_block(cfg["actor"], "actor", notes)
    critic = cfg.get("critic") if isinstance(cfg.get("critic"), dict) else {
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
        from rsl_rl.algorithms import PPO as algo_cls
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


def infer_cfg(actor_sd: dict[str, Any], critic_sd: dict[str, Any] | None, activation: str,
              num_actions: int | None, path: Path) -> dict[str, Any]:
    """A 5.x runner cfg that rebuilds these state dicts: MLPModel shapes, normalization, std parameterisation."""
    for role, sd in (("actor", actor_sd), ("critic", critic_sd or {})):
        if any(k.startswith("rnn.") for k in sd):
            raise BadInput(f"{path}: the {role} is recurrent (rnn.* weights); recurrent policies are not supported")
        if any(k.startswith("cnns.") for k in sd):
            raise BadInput(f"{path}: the {role} has CNN encoders; tui-eval runs MLP policies on flat observations")

    def block(sd: dict[str, Any], role: str) -> tuple[dict[str, Any], int]:
        layers = _mlp_layers(sd, role, path)
        dims = [int(w.shape[0]) for _, w in layers]
        return {"class_name": "MLPModel", "hidden_dims": dims[:-1], "activation": activation,
                "obs_normalization": "obs_normalizer._mean" in sd}, dims[-1]

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


def summarise_load_error(exc: BaseException, source: str = "the agent cfg", role: str = "actor") -> str:
    """The strict load's RuntimeError as one line: which key, checkpoint shape vs cfg shape, what to do."""
    text = str(exc)
    sizes = re.findall(r"size mismatch for ([\w.]+): copying a param with shape torch\.Size\(\[([\d, ]*)\]\) "
                       r"from checkpoint, the shape in current model is torch\.Size\(\[([\d, ]*)\]\)", text)

    def keys_after(label: str) -> list[str]:
        match = re.search(label + r" in state_dict: (.*?)(?:\.\s*$|\.\s*\n|\.\s*(?=Unexpected|Missing))", text, re.S)
        return re.findall(r'"([^"]+)"', match.group(1)) if match else []

    missing, unexpected = keys_after(r"Missing key\(s\)"), keys_after(r"Unexpected key\(s\)")
    parts = []
    std = {"distribution.std_param": "scalar", "distribution.log_std_param": "log"}
    ck_std = [k for k in unexpected if k in std]
    cfg_std = [k for k in missing if k in std]
    if ck_std or cfg_std:
        parts.append(f"std parameterisation: the checkpoint has {ck_std[0] if ck_std else 'no std parameter'}, "
                     f"{source} builds {cfg_std[0] if cfg_std else 'none'} (distribution_cfg std_type "
                     f"{std.get(ck_std[0], '?') if ck_std else 'none'} in the weights)")
    norm_ck = any(k.startswith("obs_normalizer") for k in unexpected)
    norm_cfg = any(k.startswith("obs_normalizer") for k in missing)
    if norm_ck or norm_cfg:
        parts.append(f"obs_normalization is {'on' if norm_ck else 'off'} in the checkpoint, "
                     f"{'off' if norm_ck else 'on'} in {source}")
    other = [k for k in missing + unexpected if k not in std and not k.startswith("obs_normalizer")]
    if other:
        where = "builds" if other[0] in missing else "lacks"
        parts.append(f"{source} {where} {other[0]}{f' (+{len(other) - 1} more)' if len(other) > 1 else ''} "
                     "(hidden_dims / model class)")
    if sizes:
        key, got, want = next(((k, g, w) for k, g, w in sizes if k.startswith("mlp.")), sizes[0])
        if key.startswith("obs_normalizer") or (key == "mlp.0.weight" and got.split(",")[0] == want.split(",")[0]):
            hint = (f"the policy takes {got.split(',')[-1].strip()} observations, the env gives "
                    f"{want.split(',')[-1].strip()}: wrong --env?")
        elif key.startswith("distribution"):
            hint = f"the policy outputs {got} actions, the env takes {want}: wrong --env?"
        else:
            hint = "hidden_dims"
        more = f" (+{len(sizes) - 1} more)" if len(sizes) > 1 else ""
        parts.append(f"{key} is [{got}] in the checkpoint but [{want}] from {source} ({hint}){more}")
    if not parts:
        parts.append(text.strip().splitlines()[0][:160] if text.strip() else type(exc).__name__)
    return (f"{source} does not fit the checkpoint's weights: {role} " + "; ".join(parts)
            + "; pass the run's params/agent.yaml with --agent-cfg, or none to infer the cfg from the weights")


# ---------------------------------------------------------------------------------------------------- the kind


def _env_from_cfg(raw: dict[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
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


def _activation_of_export(exported: Path) -> str | None:
    """The activation a TorchScript `exported/policy.pt` was built with (the weights do not tell)."""
    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = torch.jit.load(str(exported), map_location="cpu")
        names = [child.original_name for child in module.mlp.children()]
    except Exception:
        return None
    found = [_TORCH_ACTIVATIONS[n] for n in names if n in _TORCH_ACTIVATIONS]
    return found[0] if found else None


def _describe_model(block: dict[str, Any]) -> str:
    dist = block.get("distribution_cfg")
    if isinstance(dist, dict):
        kind = dist.get("class_name", "GaussianDistribution").replace("Distribution", "")
        std = f" ({dist.get('std_type', 'scalar')} std)" if "Gaussian" in kind else ""
        out = f"{kind}{std}"
    else:
        out = "deterministic output"
    return (f"{block.get('class_name', 'MLPModel')} {list(block.get('hidden_dims', []))} "
            f"{block.get('activation', DEFAULT_ACTIVATION)}, obs normalization "
            f"{'on' if block.get('obs_normalization') else 'off'}, {out}")


class RslRlKind(CheckpointKind):
    name = "rsl_rl"
    path_names = ("runner", "jit", "onnx")
    default_paths = ("runner", "jit")

    @classmethod
    def recognise(cls, path: Path) -> bool:
        return path.is_file() and path.suffix == ".pt"

    def __init__(self, path: Path, spec: RunSpec):
        self.spec = spec
        self.checkpoint = path
        self.resolved_note = None
        self.notes: list[str] = []
        data = load_checkpoint(path)
        if _is_state_dict(data.get("actor_state_dict")):
            self.layout = "rsl_rl >= 4 (actor_state_dict)"
            self.actor_sd = data["actor_state_dict"]
            critic = data.get("critic_state_dict")
            self.critic_sd = critic if _is_state_dict(critic) else None
        elif _is_state_dict(data.get("model_state_dict")):
            self.actor_sd, self.critic_sd = map_pre4(data, path)
            self.layout = "rsl_rl < 4 (model_state_dict), mapped to actor/critic"
        else:
            keys = ", ".join(sorted(map(str, data))[:5]) or "none"
            raise BadInput(f"{path} is not an rsl_rl checkpoint (its keys: {keys}; expected actor_state_dict); "
                           "pass a model_<iteration>.pt saved by OnPolicyRunner.save")
        self.iteration = data.get("iter")
        self.exported_jit = path.parent / "exported" / "policy.pt"
        self.exported_onnx = path.parent / "exported" / "policy.onnx"

        raw, self.cfg_source = self._find_cfg()
        self.raw_cfg = raw
        self.env_id, self.env_config = self._resolve_env(raw)
        self.vecenv = spec.vecenv
        spaces = self._env_spaces()  # (groups {name: size}, num_actions) for Gymnasium envs, else None
        self.activation_source = ""
        if raw is None:
            activation, self.activation_source = self._activation()
            self.cfg = infer_cfg(self.actor_sd, self.critic_sd, activation, spaces[1] if spaces else None, path)
        else:
            self.cfg = normalise_cfg(raw, self.notes)
            if spec.activation:
                for block in (self.cfg["actor"], self.cfg["critic"]):
                    block["activation"] = spec.activation
                self.activation_source = "--activation"
        if self.critic_sd is None:
            self.notes.append("checkpoint has no critic_state_dict: critic not loaded")
        for block in (self.cfg["actor"], self.cfg["critic"]):
            self._check_activation(block.get("activation", DEFAULT_ACTIVATION))
        if spaces is not None:
            self._check_fit(*spaces)

    # ------------------------------------------------------------------ reading
    def _find_cfg(self) -> tuple[dict[str, Any] | None, str]:
        if self.spec.agent_cfg:
            file = Path(self.spec.agent_cfg).expanduser()
            if not file.is_file():
                raise BadInput(f"--agent-cfg {self.spec.agent_cfg} does not exist; pass the run's params/agent.yaml")
            return read_cfg_file(file), f"--agent-cfg {file}"
        for folder in (self.checkpoint.parent, self.checkpoint.parent.parent):
            for name in CFG_NAMES:
                file = folder / name
                if file.is_file():
                    return read_cfg_file(file), f"{file} (next to the run)"
        return None, "inferred from the state dict (no --agent-cfg, no params/agent.yaml next to the run)"

    def _resolve_env(self, raw: dict[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
        cfg_env, cfg_config = _env_from_cfg(raw)
        env_id = self.spec.env_id or cfg_env
        env_config = dict(cfg_config if env_id == cfg_env else {})
        env_config.update(self.spec.env_config)
        if not env_id and not self.spec.vecenv:
            raise BadInput("the checkpoint does not say which env it was trained on; pass --env ID (a registered "
                           "Gymnasium env) or --vecenv module:function")
        return env_id, env_config

    def _env_spaces(self) -> tuple[dict[str, int], int] | None:
        """Observation groups and action size of the Gymnasium env (one instance, closed at once)."""
        if self.vecenv or not self.env_id:
            return None
        import gymnasium as gym
        import numpy as np

        from tui_eval.envs import check_env_id
        from tui_eval.paths.rsl_vecenv import _group_layout

        check_env_id(self.env_id)
        try:
            env = gym.make(self.env_id, **self.env_config)
        except Exception as exc:
            raise BadInput(f"cannot make env {self.env_id!r} with --env-config {self.env_config}: "
                           f"{type(exc).__name__}: {exc}") from None
        try:
            groups = {name: size for name, _, size in _group_layout(env.observation_space)}
            if not isinstance(env.action_space, gym.spaces.Box):
                raise BadInput(f"env {self.env_id!r} has a {type(env.action_space).__name__} action space; rsl_rl "
                               "policies output continuous actions: pass an env with a Box action space")
            return groups, int(np.prod(env.action_space.shape))
        finally:
            env.close()

    def _activation(self) -> tuple[str, str]:
        if self.spec.activation:
            return self.spec.activation, "--activation"
        if self.exported_jit.is_file():
            found = _activation_of_export(self.exported_jit)
            if found:
                return found, f"read from {self.exported_jit.parent.name}/{self.exported_jit.name}"
        return DEFAULT_ACTIVATION, ("rsl_rl's default; not stored in the checkpoint, pass --activation if "
                                    "training used another")

    def _check_activation(self, name: str) -> None:
        from rsl_rl.utils import resolve_nn_activation

        try:
            resolve_nn_activation(str(name))
        except ValueError:
            raise BadInput(f"activation {name!r} is not one rsl_rl knows (elu, selu, relu, crelu, lrelu, tanh, "
                           "sigmoid, softplus, gelu, swish, mish, identity); fix --activation or the agent "
                           "cfg") from None

    def _check_fit(self, groups: dict[str, int], num_actions: int) -> None:
        """Build the actor and critic from the cfg for this env and load the weights strictly, offline."""
        import torch
        from rsl_rl.utils import resolve_class
        from tensordict import TensorDict

        from tui_eval.paths.rsl_runner import finalise_obs_groups, quiet

        cfg = finalise_obs_groups(copy.deepcopy(self.cfg), list(groups))
        first = self.actor_sd.get("mlp.0.weight")
        wanted = sum(groups[g] for g in cfg["obs_groups"]["actor"])
        if first is not None and first.dim() == 2 and int(first.shape[1]) != wanted:
            raise BadInput(f"the policy takes {int(first.shape[1])} observations but env {self.env_id!r} gives "
                           f"{wanted} ({', '.join(f'{g}: {groups[g]}' for g in cfg['obs_groups']['actor'])}); "
                           "pass the env it was trained on with --env")
        std = self.actor_sd.get("distribution.std_param", self.actor_sd.get("distribution.log_std_param"))
        if std is not None and std.dim() == 1 and int(std.shape[0]) != num_actions:
            raise BadInput(f"the policy outputs {int(std.shape[0])} actions but env {self.env_id!r} takes "
                           f"{num_actions}; pass the env it was trained on with --env")
        obs = TensorDict({g: torch.zeros(1, size) for g, size in groups.items()}, batch_size=[1])
        for role, sd, out in (("actor", self.actor_sd, num_actions), ("critic", self.critic_sd, 1)):
            if sd is None:
                continue
            cls, kwargs = resolve_class(cfg[role])
            try:
                with quiet():
                    model = cls(obs, cfg["obs_groups"], role, out, **kwargs)
            except Exception as exc:
                raise BadInput(f"rsl_rl cannot build the {role} from {self._cfg_label()}: {type(exc).__name__}: "
                               f"{str(exc).splitlines()[0][:160] if str(exc) else ''}") from None
            try:
                model.load_state_dict(sd, strict=True)
            except RuntimeError as exc:
                raise BadInput(summarise_load_error(exc, self._cfg_label(), role)) from None
            if getattr(model, "is_recurrent", False):
                raise BadInput("recurrent rsl_rl policies are not supported by tui-eval yet; evaluate an MLP policy")

    def _cfg_label(self) -> str:
        if self.cfg_source.startswith("--agent-cfg"):
            return self.cfg_source
        if self.raw_cfg is not None:
            return "the run's params/agent.yaml"
        return "the cfg inferred from the weights"

    # ------------------------------------------------------------------ helpers for the paths
    def runner_checkpoint(self) -> tuple[Path, str]:
        """The file `runner.load` reads, and how to name it: the checkpoint itself, or its 5.x mapping."""
        if "model_state_dict" not in self.layout:
            return self.checkpoint, self.checkpoint.name
        import torch

        from tui_eval.paths.rsl_export import cache_root

        digest = hashlib.sha256(self.checkpoint.read_bytes()).hexdigest()[:16]
        target = cache_root() / "rsl_rl" / f"{self.checkpoint.stem}-{digest}" / "mapped_5x.pt"
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_suffix(".partial")
            torch.save({"actor_state_dict": self.actor_sd, "critic_state_dict": self.critic_sd or {},
                        "iter": self.iteration or 0, "infos": None}, partial)
            partial.replace(target)
        return target, f"{self.checkpoint.name} mapped to the 5.x layout ({target})"

    def _env(self, path_name: str):
        from tui_eval.paths.rsl_vecenv import make_eval_vecenv

        seeds = self.spec.seeds.start if self.spec.seeds is not None else HELD_OUT_START
        return make_eval_vecenv(env_id=self.env_id, env_config=self.env_config,
                                num_envs=self.spec.num_envs or DEFAULT_NUM_ENVS, device=self.spec.device,
                                success_key=self.spec.success_key,
                                step_timeout=self.spec.step_timeout, vecenv=self.vecenv, seed=seeds,
                                agent_cfg=self.cfg)

    # ------------------------------------------------------------------ kind API
    def describe(self) -> dict[str, str]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            lib = version("rsl-rl-lib")
        except PackageNotFoundError:
            lib = "?"
        actor = _describe_model(self.cfg["actor"])
        if self.activation_source:
            actor += f" (activation: {self.activation_source})"
        facts = {
            "algorithm": f"{self.cfg['algorithm'].get('class_name', 'PPO')} (rsl-rl-lib {lib})",
            "format": f"{self.layout}, iteration {self.iteration}",
            "config": self.cfg_source,
            "actor": actor,
            "env": (self.env_id or "?") + (f" {json.dumps(self.env_config)}" if self.env_config else "")
            + (f" via --vecenv {self.vecenv}" if self.vecenv else " (Gymnasium, one seed per world's episode)"),
            "explore": "off: rsl_rl's inference policy is the deterministic mean",
            "exported": ("exported/policy.pt next to the checkpoint" if self.exported_jit.is_file()
                         else "none next to the checkpoint: the jit path exports from the runner"),
        }
        clip = (self.raw_cfg or {}).get("clip_actions")
        if clip is not None and not self.vecenv:
            facts["clip_actions"] = f"±{clip} (as Isaac Lab's RslRlVecEnvWrapper)"
        if self.notes:
            facts["notes"] = "; ".join(self.notes)
        return facts

    def default_seeds(self, episodes: int | None) -> tuple[SeedBlock, str]:
        seed = (self.raw_cfg or {}).get("seed")
        stop = None if episodes is None else HELD_OUT_START + episodes
        why = (f"held out: training seeded from the agent cfg's seed={seed} and counted up from it; evaluation "
               f"starts at {HELD_OUT_START}" if seed is not None else
               "held out: far above the small seeds rsl_rl / Isaac Lab training uses (42 by default)")
        if self.vecenv:
            why += "; the --vecenv factory seeds its worlds itself, tui-eval labels episodes with these seeds"
        return SeedBlock(HELD_OUT_START, stop), why

    def default_explore(self, path_name: str) -> bool:
        return False  # get_inference_policy() and the exports give the deterministic mean

    def build_path(self, name: str, explore: bool) -> InferencePath:
        if name not in self.path_names:
            raise BadInput(f"path {name!r} is not an rsl_rl path; choose from: {', '.join(self.path_names)}")
        if explore and name != "runner":
            raise BadInput(f"the {name} path runs the exported policy, which is the deterministic mean; explore is "
                           "only available for the runner path (--explore runner=on)")
        if name == "onnx":
            try:
                import onnxruntime  # noqa: F401
            except ImportError:
                raise BadInput("the onnx path needs onnxruntime: pip install onnxruntime") from None
        runner_checkpoint, note = self.runner_checkpoint()
        env = self._env(name)
        if name == "runner":
            from tui_eval.paths.rsl_runner import RslRunnerPath

            return RslRunnerPath(env=env, cfg=self.cfg, checkpoint=runner_checkpoint, device=self.spec.device,
                                 explore=explore, checkpoint_note=note, cfg_label=self._cfg_label())
        from tui_eval.paths.rsl_export import RslJitPath, RslOnnxPath

        cls, exported = (RslJitPath, self.exported_jit) if name == "jit" else (RslOnnxPath, self.exported_onnx)
        return cls(env=env, cfg=self.cfg, checkpoint=self.checkpoint, runner_checkpoint=runner_checkpoint,
                   exported=exported if exported.is_file() else None, device=self.spec.device,
                   cfg_label=self._cfg_label())
