"""RLlib new-API-stack checkpoints (ray 2.60): `Algorithm.save()` directories and Tune runs holding them."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

from tui_eval.envs import check_env_id
from tui_eval.kinds.base import CheckpointKind
from tui_eval.paths.base import InferencePath
from tui_eval.spec import BadInput, RunSpec, SeedBlock

MARKER = "rllib_checkpoint.json"
from tui_eval.paths.rllib_layout import MODULES_DIR
# Far above the seeds RLlib derives from config.seed (seed + small offsets, + 1_000_000 for evaluation).
HELD_OUT_START = 1_000_000_000


def _find_checkpoints(path: Path) -> list[Path]:
    """RLlib checkpoints at or below `path`: itself, its checkpoint_* (Tune trial), or its trials' (experiment)."""
    if (path / MARKER).is_file():
        return [path]
    if not path.is_dir():
        return []
    found = [p for p in path.glob("checkpoint_*") if (p / MARKER).is_file()]
    found += [p for p in path.glob("*/checkpoint_*") if (p / MARKER).is_file()]
    return found


def _load_pickle(file: Path) -> Any:
    try:
        with file.open("rb") as fh:
            return pickle.load(fh)
    except FileNotFoundError:
        raise BadInput(f"{file} is missing: the checkpoint is incomplete; save it again with algo.save()") from None
    except Exception as exc:
        raise BadInput(f"cannot read {file} ({type(exc).__name__}: {str(exc)[:80]}): the checkpoint is "
                       "truncated or corrupt, or from another ray version; use a complete ray 2.60 checkpoint") from None


def _quiet_ray_logs() -> None:
    """RLlib logs deprecation and new-API-stack notices at WARNING on every build; they are not the
    user's problem here. Ray sets its loggers up on import, so this runs after that."""
    import logging

    for name in ("ray", "ray.rllib", "ray.tune"):
        logging.getLogger(name).setLevel(logging.ERROR)


class RllibKind(CheckpointKind):
    name = "rllib"
    path_names = ("evaluate", "connectors")
    default_paths = ("evaluate", "connectors")

    @classmethod
    def recognise(cls, path: Path) -> bool:
        return path.is_dir() and bool(_find_checkpoints(path))

    def __init__(self, path: Path, spec: RunSpec):
        self.spec = spec
        found = _find_checkpoints(path)
        self.checkpoint = max(found, key=lambda p: (p / MARKER).stat().st_mtime)
        self.resolved_note = None
        if self.checkpoint != path:
            self.resolved_note = f"using the newest of {len(found)} checkpoint(s) under {path}: {self.checkpoint}"
        self.meta = self._read_marker()
        ctor = _load_pickle(self.checkpoint / "class_and_ctor_args.pkl")  # imports ray.rllib
        _quiet_ray_logs()
        try:
            self.algo_class = ctor["class"]
            args, kwargs = ctor["ctor_args_and_kwargs"]
            config = kwargs.get("config", args[0] if args else None)
        except Exception:
            raise BadInput(f"{self.checkpoint} holds no readable AlgorithmConfig; use a checkpoint written by "
                           "Algorithm.save() on ray 2.60") from None
        if not isinstance(config, dict):
            config = config.get_state() if hasattr(config, "get_state") else None
        if not config:
            raise BadInput(f"{self.checkpoint} holds no readable AlgorithmConfig; re-save it with Algorithm.save()")
        self.config_state: dict[str, Any] = config
        if not config.get("enable_rl_module_and_learner", False) or not config.get(
            "enable_env_runner_and_connector_v2", False
        ):
            raise BadInput(f"{self.checkpoint} is an old-API-stack checkpoint; tui-eval needs the new API stack "
                           "(RLModule + connectors): retrain or re-save with the new API stack enabled")
        self.env_id, self.env_config = self._resolve_env()
        self.module_ids = self._module_ids()
        self.module_id = self._pick_module()

    # ------------------------------------------------------------------ reading
    def _read_marker(self) -> dict[str, Any]:
        try:
            meta = json.loads((self.checkpoint / MARKER).read_text())
        except Exception:
            raise BadInput(f"{self.checkpoint / MARKER} is unreadable (truncated or corrupt); "
                           "use a complete checkpoint") from None
        version = str(meta.get("checkpoint_version", "0"))
        if int(version.split(".")[0]) < 2:
            raise BadInput(f"{self.checkpoint} is an old-API-stack checkpoint (version {version}); tui-eval needs "
                           "a new API stack checkpoint (ray >= 2.40, RLModule + connectors)")
        return meta

    def _resolve_env(self) -> tuple[str, dict[str, Any]]:
        env = self.spec.env_id or self.config_state.get("env")
        if not isinstance(env, str) or not env:
            raise BadInput(f"the checkpoint's env is {env!r}, not a registered env id; pass --env ID")
        check_env_id(env)
        env_config = dict(self.config_state.get("env_config") or {})
        env_config.update(self.spec.env_config)
        return env, env_config

    def _module_ids(self) -> list[str]:
        modules = self.checkpoint / MODULES_DIR
        ids = sorted(p.name for p in modules.iterdir() if p.is_dir()) if modules.is_dir() else []
        if not ids:
            raise BadInput(f"{self.checkpoint} holds no RLModule under {MODULES_DIR}; the checkpoint is incomplete")
        return ids

    def _pick_module(self) -> str:
        if self.spec.module is not None:
            if self.spec.module not in self.module_ids:
                raise BadInput(f"--module {self.spec.module!r} is not in the checkpoint; its modules are: "
                               f"{', '.join(self.module_ids)}")
            return self.spec.module
        if len(self.module_ids) > 1:
            raise BadInput(f"the checkpoint has several modules ({', '.join(self.module_ids)}); pick one with --module ID")
        return self.module_ids[0]

    @property
    def algorithm(self) -> str:
        return getattr(self.algo_class, "__name__", str(self.algo_class))

    def _evaluation_explore(self) -> bool:
        eval_cfg = self.config_state.get("evaluation_config") or {}
        if not isinstance(eval_cfg, dict):
            eval_cfg = getattr(eval_cfg, "__dict__", {})
        return bool(eval_cfg.get("explore", self.config_state.get("explore", True)))

    # ------------------------------------------------------------------ kind API
    def describe(self) -> dict[str, str]:
        cfg = self.config_state
        return {
            "algorithm": self.algorithm,
            "env": self.env_id + (f" {json.dumps(self.env_config)}" if self.env_config else ""),
            "module": self.module_id + (f" (of {', '.join(self.module_ids)})" if len(self.module_ids) > 1 else ""),
            "explore": f"training {cfg.get('explore')}, evaluation {self._evaluation_explore()}",
            "normalize_actions": str(cfg.get("normalize_actions")),
            "clip_actions": str(cfg.get("clip_actions")),
            "seed": str(cfg.get("seed")),
            "ray": str(self.meta.get("ray_version", "?")),
        }

    def default_seeds(self, episodes: int | None) -> tuple[SeedBlock, str]:
        seed = self.config_state.get("seed")
        stop = None if episodes is None else HELD_OUT_START + episodes
        why = (f"held out: training seeded envs from config seed={seed} (seeds near {seed}, evaluation near "
               f"{seed}+1000000)" if seed is not None else "held out: training used unseeded (random) envs")
        return SeedBlock(HELD_OUT_START, stop), why

    def default_explore(self, path_name: str) -> bool:
        if path_name == "evaluate":
            return self._evaluation_explore()
        # RLlib's inference example calls forward_inference and the connectors with explore=False.
        return False

    def prepare_process(self, paths: list[str]) -> None:
        # ray.init enables faulthandler on sys.stderr, which needs a real file descriptor: start ray
        # before a Textual app replaces stderr.
        if "evaluate" in paths:
            from tui_eval.paths.rllib_evaluate import ensure_ray

            ensure_ray()

    def build_path(self, name: str, explore: bool) -> InferencePath:
        common = dict(checkpoint=self.checkpoint, module_id=self.module_id, env_id=self.env_id,
                      env_config=self.env_config, num_envs=self.spec.num_envs, device=self.spec.device,
                      explore=explore, success_key=self.spec.success_key, step_timeout=self.spec.step_timeout)
        if name == "evaluate":
            from tui_eval.paths.rllib_evaluate import RllibEvaluatePath

            return RllibEvaluatePath(config_state=self.config_state, algo_class=self.algo_class, **common)
        if name == "connectors":
            from tui_eval.paths.rllib_connectors import RllibConnectorsPath

            return RllibConnectorsPath(generic_connectors=self.spec.generic_connectors, **common)
        raise BadInput(f"path {name!r} is not an RLlib path; choose from: {', '.join(self.path_names)}")
