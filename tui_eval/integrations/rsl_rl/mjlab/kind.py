"""mjlab run folders: an rsl_rl checkpoint whose env, runner and deployed policy mjlab defines.

Recognised from the files mjlab's `train` writes (`run_folder.py`): a `model_<iteration>.pt` of such a run, or
the run folder itself (its newest checkpoint, said). The task is `--env TASK`, checked against mjlab's registry
(the run folder does not store it). Paths: `runner` (the task's runner class, `MjlabOnPolicyRunner` by default,
as mjlab's `play` loads it), `onnx` (mjlab's own `<run>.onnx`, batch 1: one row per world; else an export of the
runner's policy), `jit` (a TorchScript export). The env: `env.MjlabVecEnv`. Episodes carry the termination term
that ended them and their reward terms (`paths/manager_terms.py`); success is "ran to its time limit".
"""

from __future__ import annotations

from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from tui_eval.config.spec import DEFAULT_NUM_ENVS, RunSpec
from tui_eval.errors import BadInput
from tui_eval.integrations.base import PathEntry
from tui_eval.integrations.rsl_rl.kind import HELD_OUT_START, RslRlKind
from tui_eval.integrations.rsl_rl.run_folder import MJLAB, checkpoints, deployed_onnx, framework_of, run_folder_of

DEPLOY = "deploy"  # the deployed export driven by its deployment contract (mjlab/deploy.py)
#: metadata keys of mjlab's ONNX export shown in the header (the rest are per joint or per observation term)
_SHOWN_METADATA = ("run_path", "joint_names", "command_names", "observation_names", "action_scale")


class MjlabKind(RslRlKind):
    name = "mjlab"

    @classmethod
    def recognise(cls, path: Path) -> bool:
        if not (path.is_dir() or path.suffix == ".pt"):
            return False
        folder = run_folder_of(path)
        return folder is not None and framework_of(folder) == MJLAB

    def __init__(self, path: Path, spec: RunSpec):
        folder = run_folder_of(path)
        assert folder is not None  # recognise() found it
        note = None
        if path.is_dir():
            found = checkpoints(folder)
            if not found:
                raise BadInput(f"the mjlab run folder {folder} holds no model_<iteration>.pt; pass a run that saved "
                               "a checkpoint")
            path = found[-1]
            note = f"using the newest of {len(found)} checkpoint(s) of the run {folder}: {path.name}"
        self.run_folder = folder
        self.deployed = deployed_onnx(folder)
        super().__init__(path, spec)
        self.resolved_note = note
        if self.deployed is not None:
            self.exported_onnx = self.deployed
        self.default_paths = ("runner", "onnx") if self.deployed is not None else ("runner", "jit")

    # ------------------------------------------------------------------ reading
    def _resolve_env(self, raw: dict[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
        if self.spec.kind_option("vecenv"):  # the user's own factory wins
            return super()._resolve_env(raw)
        from tui_eval.integrations.rsl_rl.mjlab.tasks import check_task

        experiment = (raw or {}).get("experiment_name")
        return check_task(self.spec.env_id, str(experiment) if experiment else None), dict(self.spec.env_config)

    def _env_spaces(self, images: bool) -> None:
        return None  # not a Gymnasium env: the runner checks the weights against the env when it loads them

    def on_other_env(self, spec: RunSpec) -> RslRlKind:
        """`--vs-env TASK`: the policy on another mjlab task (sim-to-sim, e.g. flat terrain to rough)."""
        if spec.vs_env and not spec.kind_option("vs_vecenv"):
            from tui_eval.integrations.rsl_rl.mjlab.tasks import check_task

            check_task(spec.vs_env, None, flag="--vs-env")
        return super().on_other_env(spec)

    def runner_class(self) -> type | None:
        if self.vecenv and not self.env_id:
            return None
        from mjlab.rl import MjlabOnPolicyRunner
        from mjlab.tasks.registry import load_runner_cls

        return load_runner_cls(str(self.env_id)) or MjlabOnPolicyRunner

    def _env(self, path_name: str):
        if self.vecenv:
            return super()._env(path_name)
        from tui_eval.integrations.rsl_rl.mjlab.env import MjlabVecEnv, step_counter_of

        return MjlabVecEnv(task=str(self.env_id), env_config=self.env_config, agent_cfg=self.raw_cfg or self.cfg,
                           num_envs=self.spec.num_envs or DEFAULT_NUM_ENVS, device=self.spec.device,
                           seed=self.spec.seeds.start if self.spec.seeds is not None else HELD_OUT_START,
                           step_counter=step_counter_of(self.infos), success_key=self.spec.success_key,
                           step_timeout=self.spec.step_timeout,
                           stated=self.stated_contract() if path_name == DEPLOY else None)

    def stated_contract(self) -> dict[str, Any]:
        """What `<run>.onnx`'s metadata states (mjlab/contract.py), for the `deploy` path; one line when unreadable."""
        from tui_eval.integrations.rsl_rl.mjlab.contract import ContractUnreadable, parse_metadata

        assert self.deployed is not None
        meta = onnx_metadata(self.deployed)
        try:
            stated = parse_metadata(meta)
        except ContractUnreadable as exc:
            raise BadInput(f"the deploy path drives {self.deployed.name} by its metadata, and {exc}; run the "
                           "other paths (--paths runner,onnx) or export again") from None
        if not any(key in stated for key in ("joint_stiffness", "default_joint_pos", "action_scale")):
            raise BadInput(f"the deploy path drives {self.deployed.name} by its metadata, which states no gains, "
                           "default pose or action scale; run the other paths (--paths runner,onnx)")
        return stated

    def _build(self, name: str, explore: bool):
        if name != DEPLOY:
            return super()._build(name, explore)
        from tui_eval.integrations.rsl_rl.paths.export import RslOnnxPath

        assert self.deployed is not None
        runner_checkpoint, _ = self.runner_checkpoint()
        path = RslOnnxPath(env=self._env(name), cfg=self.cfg, checkpoint=self.checkpoint,
                           runner_checkpoint=runner_checkpoint, exported=self.deployed, device=self.spec.device,
                           cfg_label=self._cfg_label())
        path.name = DEPLOY
        order = getattr(path.env, "action_order", None)
        path.description = (f"{self.deployed.name} driven as its deployment contract states: the env's gains, default "
                            "pose, action scale and observation terms from its metadata"
                            + (f", actions mapped to the joints in its order {order}" if order else "")
                            + f"; {path.description}")
        return path

    # ------------------------------------------------------------------ kind API
    def describe(self) -> dict[str, str]:
        facts = super().describe()
        try:
            lib = f"mjlab {version('mjlab')}"
        except PackageNotFoundError:
            lib = "mjlab"
        if not self.vecenv:
            overrides = f" with {self.env_config}" if self.env_config else ""
            facts["env"] = (f"{self.env_id} ({lib}, its training cfg{overrides}; every batch of worlds seeded by "
                            "tui-eval and started at the checkpoint's curriculum step)")
            facts["success"] = (f"--success-key {self.spec.success_key}" if self.spec.success_key else
                                "the episode ran to its time limit (a time_out termination term); every episode "
                                "records the term that ended it and its reward terms")
        facts["run"] = str(self.run_folder)
        if self.deployed is not None:
            facts["exported"] = f"{self.deployed.name} (mjlab's ONNX export, what the run deploys)"
            meta = onnx_metadata(self.deployed)
            if meta:
                facts["onnx metadata"] = metadata_line(meta)
        return facts

    def deploy_contract(self) -> Any:
        """`<run>.onnx`'s metadata against one world of the env the run builds (mjlab/contract.py); None without
        a deployed export or with a `--vecenv` factory (no mjlab env to read)."""
        if self.deployed is None or self.vecenv:
            return None
        from tui_eval.integrations.rsl_rl.export_contract import export_tensors, normalizer_item
        from tui_eval.integrations.rsl_rl.mjlab.contract import read_contract
        from tui_eval.integrations.rsl_rl.mjlab.env import make_env

        env = make_env(1, self.spec.device, HELD_OUT_START, str(self.env_id), self.env_config,
                       dict(self.raw_cfg or self.cfg))
        try:
            contract = read_contract(self.deployed, onnx_metadata(self.deployed), env.unwrapped)
        finally:
            env.close()
        contract.items.append(normalizer_item(self.actor_sd, export_tensors(self.deployed)))
        return contract

    def own_paths(self) -> list[PathEntry]:
        entries = super().own_paths()
        if self.deployed is None:
            return entries
        onnx = f"mjlab's {self.deployed.name} (the deterministic mean; batch 1: one row per world)"
        entries = [replace(e, explore_source=onnx) if e.name == "onnx" else e for e in entries]
        if self.vecenv:  # no mjlab env to put the contract's values in
            return entries
        return entries + [PathEntry(DEPLOY, lambda explore: self._build(DEPLOY, explore), lambda: False,
                                    f"{self.deployed.name} as its deployment contract states (deterministic mean)")]


def onnx_metadata(path: Path) -> dict[str, str]:
    """The metadata mjlab attached to its ONNX export (empty when it cannot be read)."""
    try:
        import onnx

        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # no onnx package, or not an ONNX file: the path says so when it loads it
        return {}
    return {prop.key: prop.value for prop in model.metadata_props}


def metadata_line(meta: dict[str, str]) -> str:
    """A few of the export's metadata fields, shortened: what it was exported for."""
    parts = []
    for key in _SHOWN_METADATA:
        if key in meta:
            value = meta[key]
            items = value.split(",")
            shown = value if len(value) <= 48 else f"{len(items)} entries ({', '.join(items[:3])}, ...)"
            parts.append(f"{key}: {shown}")
    rest = len(meta) - len(parts)
    return "; ".join(parts) + (f" (+{rest} more field(s))" if rest > 0 else "")
