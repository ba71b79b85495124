"""rsl_rl checkpoints (rsl-rl-lib 5.x `model_<it>.pt`, as `OnPolicyRunner.save` and Isaac Lab write them).

A checkpoint is a torch file holding `actor_state_dict`, `critic_state_dict`, `optimizer_state_dict`,
`iter`, `infos`; it is read here with `torch.load(weights_only=True)`. rsl_rl saves no config, so the
runner cfg is rebuilt from, in order:

1. `--agent-cfg FILE` (YAML or JSON: an rsl_rl runner cfg, or Isaac Lab's `params/agent.yaml`),
2. Isaac Lab's `params/agent.yaml` next to the run (the checkpoint's folder or its parent),
3. the state dict itself: hidden dims from the `mlp.N.weight` shapes, an RNNModel's type (LSTM: 4 gates,
   GRU: 3), size and layers from its `rnn.rnn.weight_hh_lN`, observation normalization from
   `obs_normalizer.*`, the Gaussian std parameterisation from `distribution.std_param` (scalar) or
   `distribution.log_std_param` (log). The activation is not in the weights: `--activation`, else the
   one an `exported/policy.pt` next to the checkpoint was built with, else rsl_rl's default (elu).
   CNN encoders are not inferred: a CNNModel needs its cfg.

Actors and critics are rsl_rl 5's MLPModel, RNNModel (recurrent: the paths reset its state at each
world's episode start) or CNNModel (image groups of shape (C, H, W)); each reads its own observation
groups (`obs_groups`). Cfgs of older layouts are mapped to the 5.x one (`policy:` ActorCritic /
ActorCriticRecurrent blocks of rsl_rl < 4, as Isaac Lab's RslRlPpoActorCritic[Recurrent]Cfg writes
them, the `stochastic` / `init_noise_std` / `noise_std_type` keys of 4.x); keys a class does not take
are dropped and listed in `describe()`. Checkpoints of rsl_rl < 4 (`model_state_dict`, an
`ActorCritic` or `ActorCriticRecurrent`) are mapped to the actor/critic layout.

The env: `--env ID` (a registered Gymnasium env), else the cfg's `tui_eval_env` (an id, or
`{id: ..., config: {...}}`), `env_id` or `env` key; or `--vecenv module:function`, a factory of rsl_rl
VecEnvs (see integrations/rsl_rl/paths/vecenv.py).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_eval.config.spec import DEFAULT_NUM_ENVS, RunSpec, SeedBlock
from tui_eval.envs.seeding import SeedCheck
from tui_eval.errors import BadInput, first_line
from tui_eval.integrations.base import Candidate, CheckpointKind, PathEntry
from tui_eval.integrations.rsl_rl.cfg import describe_model, env_from_cfg, infer_cfg, normalise_cfg, read_cfg_file
from tui_eval.integrations.rsl_rl.paths.load_error import summarise_load_error
from tui_eval.integrations.rsl_rl.paths.model import (
    DEFAULT_ACTIVATION,
    activation_of_export,
    finalise_obs_groups,
    is_state_dict,
    load_checkpoint,
    map_pre4,
    model_class,
    quiet,
)
from tui_eval.integrations.rsl_rl.paths.vecenv import takes_images
from tui_eval.integrations.rsl_rl.run_folder import ENV_PARAMS, ISAAC_LAB, checkpoints, framework_of, run_folder_of
from tui_eval.paths.base import InferencePath
from tui_eval.paths.native_output import native_stdout_quiet

# Far above the seeds training uses (rsl_rl / Isaac Lab seed from the agent cfg's `seed`, 42 by default;
# tui-eval's Gymnasium adapter trains worlds on seeds counting up from it).
HELD_OUT_START = 1_000_000_000
CFG_NAMES = ("params/agent.yaml", "params/agent.yml", "params/agent.json")


class RslRlKind(CheckpointKind):
    name = "rsl_rl"
    default_paths = ("runner", "jit")

    @classmethod
    def recognise(cls, path: Path) -> bool:
        # a folder of model_<N>.pt that no framework's kind opened (an mjlab run is opened first): said why, below
        return (path.is_file() and path.suffix == ".pt") or (path.is_dir() and bool(checkpoints(path)))

    @classmethod
    def candidates(cls, path: Path) -> list[Candidate]:
        """A run folder's `model_<iteration>.pt` files (or one file), each with the training curve's
        `Train/mean_reward` at its iteration (from the folder's TensorBoard events, where there are any)."""
        from tui_eval.integrations.rsl_rl.training_curve import TAG, at, mean_rewards

        files = checkpoints(path) if path.is_dir() else [path] if cls.recognise(path) else []
        curve = mean_rewards(files[0].parent) if files else {}
        found = []
        for p in files:
            suffix = p.stem.rsplit("_", 1)[-1]
            iteration = int(suffix) if suffix.isdigit() else None
            metric = at(curve, iteration)
            found.append(Candidate(p, iteration, metric, TAG if metric is not None else None))
        return found

    def sweep_path(self) -> tuple[str, str]:
        return "runner", ("the runner's inference policy, which the export is made from: a run folder's exported "
                          "policy is its newest checkpoint's alone")

    def __init__(self, path: Path, spec: RunSpec):
        if path.is_dir():
            raise BadInput(unopened_run_folder(path))
        self.spec = spec
        self.checkpoint = path
        self.resolved_note = None
        self.notes: list[str] = []
        data = load_checkpoint(path)
        if is_state_dict(data.get("actor_state_dict")):
            self.mapped_from_pre4 = False
            self.actor_sd = data["actor_state_dict"]
            critic = data.get("critic_state_dict")
            self.critic_sd = critic if is_state_dict(critic) else None
        elif is_state_dict(data.get("model_state_dict")):
            self.actor_sd, self.critic_sd = map_pre4(data, path)
            self.mapped_from_pre4 = True
        else:
            keys = ", ".join(sorted(map(str, data))[:5]) or "none"
            raise BadInput(f"{path} is not an rsl_rl checkpoint (its keys: {keys}; expected actor_state_dict); "
                           "pass a model_<iteration>.pt saved by OnPolicyRunner.save")
        self.iteration = data.get("iter")
        self.infos = data.get("infos")
        self.exported_jit = path.parent / "exported" / "policy.pt"
        self.exported_onnx = path.parent / "exported" / "policy.onnx"

        raw, self.cfg_source = self._find_cfg()
        self.raw_cfg = raw
        self.env_id, self.env_config = self._resolve_env(raw)
        self.vecenv = spec.kind_option("vecenv")
        spaces = self._env_spaces(takes_images(raw))  # ({group: shape}, num_actions) for Gymnasium envs, else None
        self.activation_source = ""
        if raw is None:
            activation, self.activation_source = self._activation()
            self.cfg = infer_cfg(self.actor_sd, self.critic_sd, activation, spaces[1] if spaces else None, path)
        else:
            self.cfg = normalise_cfg(raw, self.notes)
            if spec.kind_option("activation"):
                for block in (self.cfg["actor"], self.cfg["critic"]):
                    block["activation"] = spec.kind_option("activation")
                self.activation_source = "--activation"
        if self.critic_sd is None:
            self.notes.append("checkpoint has no critic_state_dict: critic not loaded")
        for block in (self.cfg["actor"], self.cfg["critic"]):
            self._check_activation(block.get("activation", DEFAULT_ACTIVATION))
        if spaces is not None:
            self._check_fit(*spaces)

    # ------------------------------------------------------------------ reading
    def _find_cfg(self) -> tuple[dict[str, Any] | None, str]:
        given = self.spec.kind_option("agent_cfg")
        if given:
            file = Path(given).expanduser()
            if not file.is_file():
                raise BadInput(f"--agent-cfg {given} does not exist; pass the run's params/agent.yaml")
            return read_cfg_file(file), f"--agent-cfg {file}"
        for folder in (self.checkpoint.parent, self.checkpoint.parent.parent):
            for name in CFG_NAMES:
                file = folder / name
                if file.is_file():
                    return read_cfg_file(file), f"{file} (next to the run)"
        return None, "inferred from the state dict (no --agent-cfg, no params/agent.yaml next to the run)"

    def _resolve_env(self, raw: dict[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
        cfg_env, cfg_config = env_from_cfg(raw)
        env_id = self.spec.env_id or cfg_env
        env_config = dict(cfg_config if env_id == cfg_env else {})
        env_config.update(self.spec.env_config)
        if not env_id and not self.spec.kind_option("vecenv"):
            folder = run_folder_of(self.checkpoint)
            if folder is not None and framework_of(folder) == ISAAC_LAB:
                raise BadInput("an Isaac Lab run: its env needs Isaac Sim, which tui-eval does not start; run tui-eval "
                               "with Isaac Lab's python and --vecenv your_module:make_env, a factory that builds the "
                               "task with Isaac Lab's RslRlVecEnvWrapper (README: Isaac Lab)")
            raise BadInput("the checkpoint does not say which env it was trained on; pass --env ID (a registered "
                           "Gymnasium env) or --vecenv module:function")
        return env_id, env_config

    def _env_spaces(self, images: bool) -> tuple[dict[str, tuple[int, ...]], int] | None:
        """Observation groups and action size of the Gymnasium env (one instance, closed at once)."""
        if self.vecenv or not self.env_id:
            return None
        import gymnasium as gym
        import numpy as np

        from tui_eval.envs.guard import check_env_id
        from tui_eval.integrations.rsl_rl.paths.eval_env import group_layout

        with native_stdout_quiet():
            check_env_id(self.env_id)
        try:
            with native_stdout_quiet():
                env = gym.make(self.env_id, **self.env_config)
        except Exception as exc:  # an env's constructor may raise anything
            raise BadInput(f"cannot make env {self.env_id!r} with --env-config {self.env_config}: "
                           f"{first_line(exc)}") from None
        try:
            groups = {name: shape for name, _, shape in group_layout(env.observation_space, images)}
            if not isinstance(env.action_space, gym.spaces.Box):
                raise BadInput(f"env {self.env_id!r} has a {type(env.action_space).__name__} action space; rsl_rl "
                               "policies output continuous actions: pass an env with a Box action space")
            return groups, int(np.prod(env.action_space.shape))
        finally:
            env.close()

    def _activation(self) -> tuple[str, str]:
        if self.spec.kind_option("activation"):
            return self.spec.kind_option("activation"), "--activation"
        if self.exported_jit.is_file():
            found = activation_of_export(self.exported_jit)
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

    def _check_fit(self, groups: dict[str, tuple[int, ...]], num_actions: int) -> None:
        """Build the actor and critic from the cfg for this env and load the weights strictly, offline."""
        import torch
        from tensordict import TensorDict

        cfg = finalise_obs_groups(copy.deepcopy(self.cfg), list(groups))
        first = _input_weight(self.actor_sd, str(cfg["actor"].get("class_name")))
        actor_groups = cfg["obs_groups"]["actor"]
        wanted = sum(groups[g][0] for g in actor_groups if len(groups[g]) == 1)
        if first is not None and first.dim() == 2 and int(first.shape[1]) != wanted:
            raise BadInput(f"the policy takes {int(first.shape[1])} observations but env {self.env_id!r} gives "
                           f"{wanted} ({', '.join(f'{g}: {groups[g][0]}' for g in actor_groups)}); pass the env "
                           "it was trained on with --env, or the obs_groups it was trained with (--agent-cfg)")
        std = self.actor_sd.get("distribution.std_param", self.actor_sd.get("distribution.log_std_param"))
        if std is not None and std.dim() == 1 and int(std.shape[0]) != num_actions:
            raise BadInput(f"the policy outputs {int(std.shape[0])} actions but env {self.env_id!r} takes "
                           f"{num_actions}; pass the env it was trained on with --env")
        obs = TensorDict({g: torch.zeros(1, *shape) for g, shape in groups.items()}, batch_size=[1])
        for role, sd, out in (("actor", self.actor_sd, num_actions), ("critic", self.critic_sd, 1)):
            if sd is None:
                continue
            cls, kwargs = model_class(cfg[role])
            try:
                with quiet():
                    model = cls(obs, cfg["obs_groups"], role, out, **kwargs)
            except Exception as exc:  # a model class raises whatever its cfg makes it raise
                raise BadInput(f"rsl_rl cannot build the {role} from {self._cfg_label()}: "
                               f"{first_line(exc, 180)}") from None
            try:
                model.load_state_dict(sd, strict=True)
            except RuntimeError as exc:
                raise BadInput(summarise_load_error(exc, self._cfg_label(), role)) from None

    def _obs_groups_line(self) -> str:
        groups = dict(self.cfg.get("obs_groups") or {})
        if not groups:
            return "actor and critic: the env's groups (rsl_rl's defaults)"
        if "actor" not in groups and "policy" in groups:  # Isaac Lab before rsl_rl 4 named the actor's set so
            groups = {"actor": groups.pop("policy"), **groups}
        return "; ".join(f"{role}: {', '.join(map(str, names))}" for role, names in groups.items())

    def _cfg_label(self) -> str:
        if self.cfg_source.startswith("--agent-cfg"):
            return self.cfg_source
        if self.raw_cfg is not None:
            return "the run's params/agent.yaml"
        return "the cfg inferred from the weights"

    # ------------------------------------------------------------------ helpers for the paths
    def layout(self) -> str:
        """The checkpoint's layout, as `describe()` names it."""
        if self.mapped_from_pre4:
            return "rsl_rl < 4 (model_state_dict), mapped to actor/critic"
        return "rsl_rl >= 4 (actor_state_dict)"

    def runner_checkpoint(self) -> tuple[Path, str]:
        """The file `runner.load` reads, and how to name it: the checkpoint itself, or its 5.x mapping."""
        if not self.mapped_from_pre4:
            return self.checkpoint, self.checkpoint.name
        import torch

        from tui_eval.paths.cache import cache_root

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
        from tui_eval.integrations.rsl_rl.paths.vecenv import make_eval_vecenv

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
        actor = describe_model(self.cfg["actor"])
        if self.activation_source:
            actor += f" (activation: {self.activation_source})"
        facts = {
            "algorithm": f"{self.cfg['algorithm'].get('class_name', 'PPO')} (rsl-rl-lib {lib})",
            "format": f"{self.layout()}, iteration {self.iteration}",
            "config": self.cfg_source,
            "actor": actor,
            "obs groups": self._obs_groups_line(),
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

    def own_paths(self) -> list[PathEntry]:
        # get_inference_policy() and the exports give the deterministic mean
        return [PathEntry("runner", lambda explore: self._build("runner", explore), lambda: False,
                          "rsl_rl's get_inference_policy() (the deterministic mean)"),
                PathEntry("jit", lambda explore: self._build("jit", explore), lambda: False,
                          "the TorchScript export (the deterministic mean)"),
                PathEntry("onnx", lambda explore: self._build("onnx", explore), lambda: False,
                          "the ONNX export (the deterministic mean)")]

    def single_env_factory(self) -> Callable[[], Any]:
        if self.vecenv:
            raise BadInput("a custom path needs a Gymnasium env; this run's env comes from --vecenv (an rsl_rl "
                           "VecEnv): pass --env ID for a Gymnasium env, or compare the built-in paths")
        return super().single_env_factory()

    def seed_check(self) -> SeedCheck:
        with native_stdout_quiet():  # PyBullet prints from C at each env made
            return super().seed_check()

    def other_env_option(self, spec: RunSpec) -> str | None:
        factory = spec.kind_option("vs_vecenv")
        return f"--vs-vecenv {factory}" if factory else None

    def on_other_env(self, spec: RunSpec) -> RslRlKind:
        other = self.copy()
        assert isinstance(other, RslRlKind)
        other.env_id = spec.vs_env or (None if spec.kind_option("vs_vecenv") else self.env_id)
        config = dict(self.env_config) if other.env_id == self.env_id else {}
        config.update(spec.vs_env_config)
        other.env_config = config
        other.vecenv = spec.kind_option("vs_vecenv") or (None if spec.vs_env else self.vecenv)
        if not other.env_id and not other.vecenv:
            raise BadInput("--vs-env-config needs an env to change: pass --vs-env ID or --vs-vecenv MODULE:FUNCTION")
        return other

    def runner_class(self) -> type | None:
        """The runner class the `runner` path builds (None: rsl_rl's OnPolicyRunner)."""
        return None

    def deploy_contract(self) -> Any:
        """What the export next to the checkpoint (the file a user deploys) says without metadata: its sizes and
        whether the checkpoint's observation normalizer is inside (export_contract.py); None: no export there.
        An Isaac Lab run's contract is its params/env.yaml and IO descriptors too (isaaclab_contract.py)."""
        from tui_eval.integrations.rsl_rl.export_contract import export_contract

        exports = [self.exported_jit, self.exported_onnx]
        folder = run_folder_of(self.checkpoint)
        if folder is not None and framework_of(folder) == ISAAC_LAB:
            from tui_eval.integrations.rsl_rl.isaaclab_contract import isaac_lab_contract

            return isaac_lab_contract(folder, self.actor_sd, exports)
        return export_contract(self.actor_sd, exports)

    def probe_fix(self, probe: str) -> str | None:
        from tui_eval.integrations.rsl_rl.probe_fixes import PROBE_FIXES

        return PROBE_FIXES.get(probe)

    def _build(self, name: str, explore: bool) -> InferencePath:
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
            from tui_eval.integrations.rsl_rl.paths.runner import RslRunnerPath

            return RslRunnerPath(env=env, cfg=self.cfg, checkpoint=runner_checkpoint, device=self.spec.device,
                                 explore=explore, checkpoint_note=note, cfg_label=self._cfg_label(),
                                 runner_class=self.runner_class())
        from tui_eval.integrations.rsl_rl.paths.export import RslJitPath, RslOnnxPath

        cls, exported = (RslJitPath, self.exported_jit) if name == "jit" else (RslOnnxPath, self.exported_onnx)
        return cls(env=env, cfg=self.cfg, checkpoint=self.checkpoint, runner_checkpoint=runner_checkpoint,
                   exported=exported if exported.is_file() else None, device=self.spec.device,
                   cfg_label=self._cfg_label())


def _input_weight(sd: dict[str, Any], class_name: str):
    """The weight whose width is the model's flat observation size (None for a CNN: its MLP also takes the
    CNN latent)."""
    name = class_name.rpartition(":")[2].rpartition(".")[2]
    if name == "RNNModel":
        return sd.get("rnn.rnn.weight_ih_l0")
    return sd.get("mlp.0.weight") if name == "MLPModel" else None


def unopened_run_folder(folder: Path) -> str:
    """Why a folder of rsl_rl checkpoints was not opened as a run folder, and what to do."""
    newest = checkpoints(folder)[-1].name
    env_params = folder / ENV_PARAMS
    if not env_params.is_file():
        return (f"{folder} holds rsl_rl checkpoints but no {ENV_PARAMS}, which says which framework (mjlab, Isaac Lab) "
                f"wrote the run; copy it back, or pass one checkpoint ({newest}) with --env ID")
    if framework_of(folder) == ISAAC_LAB:
        return (f"{folder} is an Isaac Lab run folder: pass one checkpoint ({newest}) with --vecenv "
                "module:function (docs/mjlab.md, Isaac Lab)")
    return (f"{env_params} is unreadable or names no framework tui-eval opens (mjlab); copy it again from the run, "
            f"or pass one checkpoint ({newest}) with --env ID")
