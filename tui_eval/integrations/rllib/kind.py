"""RLlib new-API-stack checkpoints (ray 2.60): `Algorithm.save()` directories and Tune runs holding them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_eval.config.spec import DEFAULT_NUM_ENVS, RunSpec, SeedBlock
from tui_eval.envs.seeding import NOT_CHECKED, SeedCheck, check_seed_repeat
from tui_eval.errors import BadInput, first_line
from tui_eval.integrations.base import Candidate, CheckpointKind, PathEntry
from tui_eval.integrations.rllib.connector_frames import cheap_connector_frames
from tui_eval.integrations.rllib.env_facts import env_line, known_bounds, spaces_compatible
from tui_eval.integrations.rllib.parts import RLLIB_PARTS
from tui_eval.integrations.rllib.paths.env import EnvRecipe, resolve_env
from tui_eval.integrations.rllib.paths.filters import filters_fact, filters_in_checkpoint
from tui_eval.integrations.rllib.paths.layout import MODULES_DIR, connector_dir
from tui_eval.integrations.rllib.refusals import (
    is_multi_agent,
    refuse_for_paths,
    refuse_incomplete,
    refuse_multi_agent_env,
    refuse_without_env_runners,
)
from tui_eval.paths.base import InferencePath
from tui_eval.user.code import load_pickle

if TYPE_CHECKING:
    from tui_eval.paths.custom import CustomPath

MARKER = "rllib_checkpoint.json"
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
            return load_pickle(fh, file)  # names the user's module when it is not importable
    except FileNotFoundError:
        raise BadInput(f"{file} is missing: the checkpoint is incomplete; save it again with algo.save()") from None
    except BadInput:
        raise
    except Exception as exc:  # unpickling raises anything the pickled classes raise
        raise BadInput(f"cannot read {file} ({first_line(exc, 100)}): the checkpoint is truncated or corrupt, "
                       "or from another ray version; use a complete ray 2.60 checkpoint") from None


def _quiet_ray_logs() -> None:
    """RLlib logs deprecation and new-API-stack notices at WARNING on every build; they are not the
    user's problem here. Ray sets its loggers up on import, so this runs after that (the loggers the kind
    declares, as tui_eval/quiet.py reads them)."""
    import logging

    from tui_eval.integrations.rllib import PLUGIN

    for name in ("ray", *PLUGIN.loggers):
        logging.getLogger(name).setLevel(logging.ERROR)


class RllibKind(CheckpointKind):
    name = "rllib"
    default_paths = ("evaluate", "connectors")
    library_parts = RLLIB_PARTS  # a `--path` loop's RLModule and pipelines, found inside it for the doctor
    #: a multi-agent `--vs-env` env's agents the checkpoint's saved pipelines were not built for
    new_agents: list = []  # noqa: RUF012  (never mutated: on_other_env sets a new list)

    @classmethod
    def recognise(cls, path: Path) -> bool:
        return path.is_dir() and bool(_find_checkpoints(path))

    @classmethod
    def settings_read_first(cls, path: Path) -> list[Path] | None:
        # a Tune experiment holds Tune's own state (pickles named .json, JSON lines): its checkpoint is checked once
        # picked; a checkpoint folder is read through whole
        return None if (path / "rllib_checkpoint.json").is_file() else []

    @classmethod
    def candidates(cls, path: Path) -> list[Candidate]:
        from tui_eval.integrations.rllib.candidates import ordered

        return ordered(_find_checkpoints(path))

    def sweep_path(self) -> tuple[str, str]:
        return "connectors", "the deployment path: the RLModule and connector pipelines, as a user's loop runs them"

    def __init__(self, path: Path, spec: RunSpec):
        self.spec = spec
        found = _find_checkpoints(path)
        self.checkpoint = max(found, key=lambda p: (p / MARKER).stat().st_mtime)
        self.resolved_note = None
        if self.checkpoint != path:
            self.resolved_note = f"using the newest of {len(found)} checkpoint(s) under {path}: {self.checkpoint}"
        self.meta = self._read_marker()
        refuse_incomplete(self.checkpoint)
        ctor = _load_pickle(self.checkpoint / "class_and_ctor_args.pkl")  # imports ray.rllib
        _quiet_ray_logs()
        cheap_connector_frames()  # before any connector piece is built here
        try:
            self.algo_class = ctor["class"]
            args, kwargs = ctor["ctor_args_and_kwargs"]
            config = kwargs.get("config", args[0] if args else None)
        except Exception:  # a foreign or damaged state has any shape
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
        self.module_ids = self._module_ids()
        self.config, self.eval_config = self._configs()
        self.multi_agent = is_multi_agent(self.config, self.config.env)
        refuse_without_env_runners(self.checkpoint, self.algorithm)
        self.module_id = self._pick_module()
        self.env = self._recipe(self.config)  # what the user's own loop runs: the main config's env
        self.eval_env = self._recipe(self.eval_config)  # what Algorithm.evaluate() runs
        self.env_id, self.env_config = self.env.name, self.env.env_config
        self._check_observation_spaces()

    # ------------------------------------------------------------------ reading
    def _read_marker(self) -> dict[str, Any]:
        try:
            meta = json.loads((self.checkpoint / MARKER).read_text())
        except (OSError, ValueError):  # unreadable, or not JSON (JSONDecodeError, UnicodeDecodeError)
            raise BadInput(f"{self.checkpoint / MARKER} is unreadable (truncated or corrupt); "
                           "use a complete checkpoint") from None
        version = str(meta.get("checkpoint_version", "0"))
        if int(version.split(".")[0]) < 2:
            raise BadInput(f"{self.checkpoint} is an old-API-stack checkpoint (version {version}); tui-eval needs "
                           "a new API stack checkpoint (ray >= 2.40, RLModule + connectors)")
        return meta

    def _configs(self):
        """The AlgorithmConfig, and the config `Algorithm.evaluate()` runs with: the evaluation config as
        RLlib merges it (`evaluation_config` over the main one) when the checkpoint sets up evaluation
        runners; otherwise evaluate() samples on the training EnvRunner and the main config applies."""
        from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

        try:
            config = AlgorithmConfig.from_state(dict(self.config_state))
            self.has_evaluation_runners = bool(config.evaluation_interval or config.evaluation_num_env_runners > 0)
            return config, config.get_evaluation_config_object() if self.has_evaluation_runners else config
        except Exception as exc:  # from_state raises whatever the config's setters raise
            raise BadInput(f"{self.checkpoint} holds an AlgorithmConfig ray 2.60 cannot rebuild ({first_line(exc)}); "
                           "re-save the checkpoint with this ray version") from None

    def _recipe(self, config) -> EnvRecipe:
        """The config's env, or `--env` (which keeps the config's env_config only when it names the same env)."""
        env = self.spec.env_id or config.env
        env_config = dict(config.env_config or {}) if env == config.env else {}
        env_config.update(self.spec.env_config)
        return resolve_env(env, env_config)

    def _check_observation_spaces(self) -> None:
        """A policy trained on other observations fails on every step: say so now, not as a failed path."""
        trained = self._trained_observation_space()
        if trained is None or self.multi_agent:  # a multi-agent pipeline saw every agent's spaces
            return
        for label, recipe in (("connectors", self.env), ("evaluate", self.eval_env)):
            try:
                env = recipe.make_one()
            except Exception as exc:  # the user's env creator may raise anything
                raise BadInput(f"could not create env {recipe.name!r} ({first_line(exc)}); check --env, "
                               "--env-config and the code that registers the env (--import)") from None
            try:
                refuse_multi_agent_env(self.config, env)
                given = env.observation_space
            finally:
                env.close()
            if not spaces_compatible(trained, given):
                raise BadInput(f"the policy was trained on observations {trained}, but env {recipe.name!r} "
                               f"({label} path) gives {given}; run the env it was trained on (--import the code "
                               "that registers it, or --env / --env-config)")

    def _trained_observation_space(self):
        """The env observation space the connector pipeline saw in training (saved with it), if readable."""
        file = connector_dir(self.checkpoint, "env_to_module") / "class_and_ctor_args.pkl"
        if not file.is_file():
            return None
        try:
            args, _ = _load_pickle(file)["ctor_args_and_kwargs"]
            return args[0] if args else None
        except (KeyError, TypeError, ValueError):
            return None

    def _module_ids(self) -> list[str]:
        modules = self.checkpoint / MODULES_DIR
        ids = sorted(p.name for p in modules.iterdir() if p.is_dir()) if modules.is_dir() else []
        if not ids:
            raise BadInput(f"{self.checkpoint} holds no RLModule under {MODULES_DIR}; the checkpoint is incomplete")
        return ids

    def _pick_module(self) -> str:
        """The module a single-agent path runs; for a multi-agent checkpoint (every module runs) the one
        `--module` narrows the view to, or "" for the team."""
        if self.spec.module is not None:
            if self.spec.module not in self.module_ids:
                raise BadInput(f"--module {self.spec.module!r} is not in the checkpoint; its modules are: "
                               f"{', '.join(self.module_ids)}")
            return self.spec.module
        if self.multi_agent:
            return ""
        if len(self.module_ids) > 1:
            raise BadInput(f"the checkpoint has several modules ({', '.join(self.module_ids)}); "
                           "pick one with --module ID")
        return self.module_ids[0]

    @property
    def algorithm(self) -> str:
        return getattr(self.algo_class, "__name__", str(self.algo_class))

    def num_envs_of(self, path_name: str) -> tuple[int, str]:
        """Envs stepped together by one of RLlib's paths, and where that number comes from."""
        if self.spec.num_envs is not None:
            return self.spec.num_envs, "--num-envs"
        if path_name == "evaluate":
            return int(self.eval_config.num_envs_per_env_runner), "evaluation config"
        return DEFAULT_NUM_ENVS, "tui-eval default"

    # ------------------------------------------------------------------ kind API
    def describe(self) -> dict[str, str]:
        cfg = self.config
        facts = {
            "algorithm": self.algorithm,
            "env": env_line(self.env),
            "module": self._module_line(),
            "explore": f"training {cfg.explore}, evaluation {self.eval_config.explore}",
            "normalize_actions": str(cfg.normalize_actions),
            "clip_actions": str(cfg.clip_actions),
            "seed": str(cfg.seed),
            "envs per path": ", ".join(f"{name} {n} ({why})" for name in self.own_path_names
                                       for n, why in [self.num_envs_of(name)]),
            "ray": str(self.meta.get("ray_version", "?")),
        }
        filters = filters_in_checkpoint(self.checkpoint)
        if filters:
            facts["filters"] = filters_fact(filters, self.spec.kind_option("freeze_filters"))
        if not self.has_evaluation_runners and self.config.evaluation_config:
            facts["evaluation config"] = ("not used: no evaluation_interval, so Algorithm.evaluate() samples on the "
                                          "training EnvRunner with the main config (as evaluate does)")
        if (self.eval_env.name, self.eval_env.env_config) != (self.env.name, self.env.env_config):
            facts["evaluation env"] = (f"{env_line(self.eval_env)}: evaluation_config differs from the training env; "
                                       "evaluate runs this one, connectors the training env")
        if "ASYNC" in str(self.eval_config.gym_env_vectorize_mode).upper():
            facts["vectorize mode"] = "ASYNC in the config; evaluate steps its envs in SYNC mode (seeds in-process)"
        return facts

    def _module_line(self) -> str:
        if not self.multi_agent:
            return self.module_id + (f" (of {', '.join(self.module_ids)})" if len(self.module_ids) > 1 else "")
        mapping = getattr(self.config.policy_mapping_fn, "__name__", "set")
        view = (f"module {self.module_id} (--module)" if self.module_id
                else "the team (all modules; --module ID for one)")
        return (f"multi-agent: all of {', '.join(self.module_ids)} (policy_mapping_fn {mapping}); "
                f"returns shown: {view}")

    def default_return_bounds(self) -> tuple[float, float, str] | None:
        """Bounds known for both paths' envs (a well-known Gymnasium env with only its time limit
        changed); None when either env may reward otherwise (a creator, other make() arguments)."""
        found = [b for b in (known_bounds(recipe) for recipe in (self.env, self.eval_env)) if b is not None]
        if len(found) < 2:
            return None
        lo, hi = min(b[0] for b in found), max(b[1] for b in found)
        sources = list(dict.fromkeys(b[2] for b in found))
        return lo, hi, "; ".join(sources)

    def default_seeds(self, episodes: int | None) -> tuple[SeedBlock, str]:
        seed = self.config_state.get("seed")
        stop = None if episodes is None else HELD_OUT_START + episodes
        why = (f"held out: training seeded envs from config seed={seed} (seeds near {seed}, evaluation near "
               f"{seed}+1000000)" if seed is not None else "held out: training used unseeded (random) envs")
        return SeedBlock(HELD_OUT_START, stop), why

    def _runners(self) -> dict[str, Any]:
        """`--workers N` on the Ray cluster: N remote evaluation runners, sharing the GPUs with the run's actors."""
        if not self.spec.on_ray:
            return {}
        gpus = 0.0
        if self.spec.device.startswith("cuda"):
            import ray

            actors = self.spec.workers * max(1, getattr(self, "path_count", 2))
            gpus = min(1.0, int(float(ray.cluster_resources().get("GPU", 0)) / actors * 100) / 100) or 0.01
        return {"workers": self.spec.workers, "gpus_per_runner": gpus}

    def needs_run_process(self, name: str) -> bool:
        return self.scales_itself(name)  # evaluate: the run's local Ray, started before an app takes the terminal

    def prepare_process(self, paths: list[str]) -> None:
        # ray.init enables faulthandler on sys.stderr, which needs a real file descriptor: start ray
        # before a Textual app replaces stderr.
        refuse_for_paths(self.config, self.eval_config, paths)
        self.path_count = len(paths)
        if "evaluate" in paths:
            from tui_eval.local_ray import ensure_ray

            ensure_ray()

    def own_paths(self) -> list[PathEntry]:
        return [
            # evaluation env runners, as RLlib scales evaluate()
            PathEntry("evaluate", self._build_evaluate, lambda: bool(self.eval_config.explore),
                      "RLlib's evaluation config (evaluation_config.explore)", lambda: self.num_envs_of("evaluate"),
                      scales_itself=True),
            # RLlib's inference example calls forward_inference and the connectors with explore=False.
            PathEntry("connectors", self._build_connectors, lambda: False,
                      "RLlib's inference example (forward_inference, explore=False)",
                      lambda: self.num_envs_of("connectors")),
        ]

    def _common(self, name: str, explore: bool) -> dict[str, Any]:
        return dict(checkpoint=self.checkpoint, module_id=self.module_id, num_envs=self.num_envs_of(name)[0],
                    device=self.spec.device, explore=explore, success_key=self.spec.success_key,
                    step_timeout=self.spec.step_timeout, freeze_filters=self.spec.kind_option("freeze_filters"))

    def _build_evaluate(self, explore: bool) -> InferencePath:
        if self.multi_agent:
            return self._build_multi_agent_path("evaluate", self._common("evaluate", explore))
        from tui_eval.integrations.rllib.paths.evaluate import RllibEvaluatePath

        return RllibEvaluatePath(config=self.config, algo_class=self.algo_class, recipe=self.eval_env,
                                 use_evaluation_config=self.has_evaluation_runners, **self._runners(),
                                 **self._common("evaluate", explore))

    def _build_connectors(self, explore: bool) -> InferencePath:
        if self.multi_agent:
            return self._build_multi_agent_path("connectors", self._common("connectors", explore))
        from tui_eval.integrations.rllib.paths.connectors import RllibConnectorsPath

        generic = bool(self.spec.kind_option("generic_connectors"))
        return RllibConnectorsPath(recipe=self.env, generic_connectors=generic, **self._common("connectors", explore))

    def single_env_factory(self) -> Callable[[], Any]:
        return self.env.make_one  # the main config's env, RLlib's way

    def custom_path(self, **kwargs: Any) -> CustomPath:
        if not self.multi_agent:
            return super().custom_path(**kwargs)
        from tui_eval.integrations.rllib.paths.multi_agent_custom import MultiAgentCustomPath

        recipe = self.env
        return MultiAgentCustomPath(make_env=lambda: recipe.make_one(recipe.context(), env_checker=False),
                                    library=self.library_parts,
                                    mapping_fn=self.config.policy_mapping_fn, module_ids=self.module_ids,
                                    view=self.module_id or None, **kwargs)

    def seed_check(self) -> SeedCheck:
        """Both paths' envs (the evaluation env may differ from the training one); a MultiAgentEnv takes
        actions per agent, which the probe does not make."""
        if self.multi_agent:
            return NOT_CHECKED
        recipes = {(r.name, json.dumps(r.env_config, sort_keys=True, default=str)): r
                   for r in (self.env, self.eval_env)}
        checks = [check_seed_repeat(r.make_one, r.name) for r in recipes.values()]
        return min(checks, key=lambda c: {False: 0, None: 1, True: 2}[c.repeats])

    def on_other_env(self, spec: RunSpec) -> RllibKind:
        other = self.copy()
        assert isinstance(other, RllibKind)
        same = spec.vs_env in (None, "", self.env.name)  # the checkpoint's own env (a name or a callable)
        config = dict(self.env.env_config) if same else {}
        config.update(spec.vs_env_config)
        other.env = other.eval_env = resolve_env(self.env.env if same else spec.vs_env, config)
        if self.multi_agent:
            from tui_eval.integrations.rllib.multi_agent_vs_env import check_multi_agent_vs_env

            other.new_agents = check_multi_agent_vs_env(other.env, self._trained_observation_space(),
                                                        spaces_compatible)
        other._check_observation_spaces()
        return other

    def check_vs(self, other: CheckpointKind) -> None:
        from tui_eval.integrations.rllib.vs_pair import refuse_unpaired

        refuse_unpaired(self, other)

    def reference_weights(self) -> dict[str, Any] | None:
        from tui_eval.integrations.rllib.doctor import reference_weights

        return reference_weights(self.checkpoint, self.module_id)

    def module_weights(self, module_id: str) -> dict[str, Any]:
        """Module `module_id`'s weights as the checkpoint holds them (a multi-agent checkpoint's doctor)."""
        from tui_eval.integrations.rllib.doctor import reference_weights

        return reference_weights(self.checkpoint, module_id)

    def probe_fix(self, probe: str) -> str | None:
        from tui_eval.integrations.rllib.doctor import PROBE_FIXES

        return PROBE_FIXES.get(probe)

    def saved_connector_states(self) -> dict[str, Any]:
        from tui_eval.integrations.rllib.doctor import saved_connector_states

        return saved_connector_states(self.checkpoint)

    def _build_multi_agent_path(self, name: str, common: dict[str, Any]) -> InferencePath:
        common = {**common, "module_ids": self.module_ids, "view": self.module_id or None}
        del common["module_id"]
        if name == "evaluate":
            from tui_eval.integrations.rllib.paths.multi_agent_evaluate import RllibMultiAgentEvaluatePath

            return RllibMultiAgentEvaluatePath(config=self.config, algo_class=self.algo_class, recipe=self.eval_env,
                                               use_evaluation_config=self.has_evaluation_runners,
                                               **self._runners(), **common)
        if name == "connectors":
            from tui_eval.integrations.rllib.multi_agent_vs_env import refuse_new_agents
            from tui_eval.integrations.rllib.paths.multi_agent_connectors import RllibMultiAgentConnectorsPath

            refuse_new_agents(self.new_agents, self.env)  # `--vs-env`'s env

            return RllibMultiAgentConnectorsPath(recipe=self.env, mapping_fn=self.config.policy_mapping_fn, **common)
        raise BadInput(f"path {name!r} is not an RLlib path")

