"""Stable-Baselines3 checkpoints: a model zip written by `model.save()` (PPO, A2C, DQN, SAC, TD3; Discrete and
Box actions), alone or in an rl-zoo3 run folder (`logs/<algo>/<env>_<n>/`, zoo.py).

What is read, offline: the zip's algorithm and spaces (model_zip.py, nothing unpickled); from a run folder, the
env id, `env_kwargs`, `env_wrapper` and VecNormalize settings as enjoy.py reads them. A plain zip does not say its
env (SB3 stores the spaces, not the id): `--env ID` then. The paths (paths/) are `predict`, the model's own
`predict()` behind its VecNormalize, and `onnx`, the export a user deploys (theirs next to the model, else one
tui-eval writes with SB3's documented recipe). The kind imports no SB3: a path loads it when built.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_eval.config.spec import DEFAULT_NUM_ENVS, RunSpec, SeedBlock
from tui_eval.errors import BadInput
from tui_eval.integrations.base import Candidate, CheckpointKind, PathEntry
from tui_eval.integrations.sb3.model_zip import ZipFacts, check_algo, read_zip
from tui_eval.integrations.sb3.paths.env import EnvRecipe
from tui_eval.integrations.sb3.zoo import ZooRun, numbered, read_run, stats_folder
from tui_eval.paths.base import InferencePath

# SB3 seeds sub-env i of a training VecEnv with seed + i (make_vec_env), rl-zoo3's eval envs likewise, and
# reseeds nothing after: training touches a handful of seeds from its own. Evaluation starts far above them.
HELD_OUT_START = 1_000_000_000
CLEARANCE = 10_000_000
ONNX_NAMES = ("{stem}.onnx", "policy.onnx")
EXPLORE_SOURCE = ("rl-zoo3's enjoy.py: deterministic, except on Atari and MiniGrid (model.predict alone samples "
                  "by default)")


class Sb3Kind(CheckpointKind):
    name = "sb3"
    default_paths = ("predict", "onnx")

    @classmethod
    def recognise(cls, path: Path) -> bool:
        return (path.is_file() and path.suffix == ".zip") or stats_folder(path) is not None

    @classmethod
    def candidates(cls, path: Path) -> list[Candidate]:
        """A run folder's numbered checkpoints by step, then its final model (best_model.zip is a copy of one
        of them, left out), each with the run's evaluation mean return at its step where evaluations.npz has it."""
        if not path.is_dir():
            return [Candidate(path)] if cls.recognise(path) else []
        stats = stats_folder(path)
        if stats is None:
            return []
        from tui_eval.integrations.sb3.evaluations import eval_returns

        curve = eval_returns(path)
        found = [Candidate(p, step, curve.get(step), "eval mean return" if step in curve else None)
                 for step, p in numbered(path)]
        final = path / f"{stats.name}.zip"
        return found + ([Candidate(final)] if final.is_file() else [])

    def sweep_path(self) -> tuple[str, str]:
        return "predict", ("the model's own predict() behind the run's VecNormalize (numbered checkpoints have no "
                           "export)")

    def __init__(self, path: Path, spec: RunSpec):
        self.spec, self.resolved_note = spec, None
        self.run: ZooRun | None = None
        if path.is_dir():
            self.run = read_run(path)
            model = self.run.model()
            self.resolved_note = f"{path}: playing {model.name}, {self.run.which(model)}"
        else:
            model = path
            if stats_folder(path.parent) is not None:
                self.run = read_run(path.parent)
        self.checkpoint = model
        self.facts: ZipFacts = read_zip(model)
        if importlib.util.find_spec("stable_baselines3") is None:  # said before any header or log, not at load
            raise BadInput(f"{model.name} is a Stable-Baselines3 {self.facts.algo.upper()} model and the sb3 kind "
                           "needs Stable-Baselines3: pip install 'tui-eval[sb3]'")
        self.algo = self.facts.algo
        if self.run is not None and self.run.algo is not None:
            named = check_algo(self.run.algo, self.run.algo_source)
            if named != self.algo:
                raise BadInput(f"{self.run.algo_source} names {named.upper()} but {model.name} holds a "
                               f"{self.algo.upper()} model; pass the run's own model")
        self.recipe = self._recipe(spec)
        self.env_id, self.env_config = self.recipe.env_id, dict(self.recipe.kwargs)
        self._check_env()
        self.onnx_file = next((f for name in ONNX_NAMES
                               if (f := model.parent / name.format(stem=model.stem)).is_file()), None)
        if self.onnx_file is not None and self.facts.obs_keys is not None:
            from tui_eval.integrations.sb3.paths.onnx import check_dict_inputs

            check_dict_inputs(self.onnx_file, self.facts.obs_keys)

    # ------------------------------------------------------------------ reading
    def _recipe(self, spec: RunSpec) -> EnvRecipe:
        run_env = self.run.env_id if self.run is not None else None
        env_id = spec.env_id or run_env
        if not env_id:
            raise BadInput(f"{self.checkpoint} does not say which env it was trained on (an SB3 zip stores the "
                           "spaces, not the env id); pass --env ID")
        same = self.run is not None and env_id == run_env
        kwargs = dict(self.run.env_kwargs) if same and self.run is not None else {}
        kwargs.update(spec.env_config)
        return EnvRecipe(env_id, kwargs, self.run.wrappers if same and self.run is not None else None)

    def _check_env(self) -> None:
        """The env is registered and gives observations of the model's shape (one env, closed at once)."""
        from tui_eval.envs.guard import check_env_id
        from tui_eval.errors import first_line

        try:
            check_env_id(self.recipe.env_id)
        except BadInput as exc:  # an env the run's args.yml names (perhaps a cut file): say which file
            if self.run is None or self.spec.env_id or self.recipe.env_id != self.run.env_id:
                raise
            raise BadInput(f"{self.run.stats / 'args.yml'} names env {self.run.env_id!r}: {exc}") from None
        try:
            env = self.recipe.make()
        except BadInput:
            raise
        except Exception as exc:  # an env's constructor may raise anything
            raise BadInput(f"cannot make env {self.recipe.env_id!r} with {self.recipe.kwargs}: {first_line(exc)}") \
                from None
        try:
            if self.facts.obs_keys is not None:  # a Dict observation (MultiInputPolicy): its keys must match
                self._check_keys(env.observation_space)
                return
            shape = json.dumps(list(env.observation_space.shape or ()))
            if self.facts.obs_shape not in ("?", shape.replace(" ", "")) and self.facts.obs_shape != shape:
                raise BadInput(f"the model takes observations of shape {self.facts.obs_shape} but env "
                               f"{self.recipe.env_id!r} gives {shape}; pass the env it was trained on with --env")
        finally:
            env.close()

    def _check_keys(self, space: Any) -> None:
        import gymnasium as gym

        given = sorted(space.spaces) if isinstance(space, gym.spaces.Dict) else None
        if given != sorted(self.facts.obs_keys or ()):
            raise BadInput(f"the model takes Dict observations of {list(self.facts.obs_keys or ())} but env "
                           f"{self.recipe.env_id!r} gives {given if given is not None else space}; pass the env it "
                           "was trained on with --env")

    def stochastic(self) -> bool:
        """enjoy.py samples on Atari and MiniGrid envs (their policies loop when greedy), else not."""
        import gymnasium as gym

        try:
            entry = str(gym.spec(self.recipe.env_id).entry_point)
        except Exception:  # an env made by a factory has no spec to read: not Atari
            return False
        return "AtariEnv" in entry or "minigrid" in entry

    # ------------------------------------------------------------------ kind API
    def describe(self) -> dict[str, str]:
        from tui_eval.integrations.sb3.describe import facts_of

        return facts_of(self)

    def default_seeds(self, episodes: int | None) -> tuple[SeedBlock, str]:
        seed = self.run.seed if self.run is not None and self.run.seed is not None else self.facts.seed
        source = "args.yml's" if self.run is not None and self.run.seed is not None else "the zip's"
        start = HELD_OUT_START
        if seed is not None and start - CLEARANCE < seed < start + CLEARANCE:
            start = seed + CLEARANCE
        stop = None if episodes is None else start + episodes
        why = (f"held out: training seeded its envs from {source} seed={seed} (sub-env i with seed+i, as "
               f"make_vec_env does) and never reseeded them; evaluation starts at {start}" if seed is not None else
               f"held out: training was not given a seed (SB3 then draws one); evaluation starts at {start}, far "
               "above the small seeds SB3 and rl-zoo3 use")
        return SeedBlock(start, stop), why

    def _envs(self) -> tuple[int, str]:
        if self.spec.num_envs:
            return self.spec.num_envs, "--num-envs"
        return DEFAULT_NUM_ENVS, "tui-eval's default (enjoy.py plays 1; one seed per episode, so only speed changes)"

    def own_paths(self) -> list[PathEntry]:
        return [PathEntry("predict", lambda explore: self._build("predict", explore), self.stochastic,
                          EXPLORE_SOURCE, self._envs),
                PathEntry("onnx", lambda explore: self._build("onnx", explore), lambda: False,
                          "the ONNX graph (SB3's export recipe takes the deterministic action)", self._envs)]

    def probe_fix(self, probe: str) -> str | None:
        from tui_eval.integrations.sb3.probe_fixes import PROBE_FIXES

        return PROBE_FIXES.get(probe)

    def single_env_factory(self) -> Callable[[], Any]:
        from tui_eval.envs.guard import check_env_id

        check_env_id(self.recipe.env_id)
        return self.recipe.make

    def on_other_env(self, spec: RunSpec) -> Sb3Kind:
        other = self.copy()
        assert isinstance(other, Sb3Kind)
        env_id = spec.vs_env or self.recipe.env_id
        same = env_id == self.recipe.env_id
        kwargs = {**(self.recipe.kwargs if same else {}), **spec.vs_env_config}
        other.recipe = EnvRecipe(env_id, kwargs, self.recipe.wrappers if same else None)
        other.env_id, other.env_config = env_id, kwargs
        other._check_env()
        return other

    def _build(self, name: str, explore: bool) -> InferencePath:
        num_envs, key, timeout = self._envs()[0], self.spec.success_key, self.spec.step_timeout
        if name == "predict":
            from tui_eval.integrations.sb3.paths.predict import PredictPath

            return PredictPath(name=name, model_path=self.checkpoint, algo=self.algo, recipe=self.recipe,
                               vecnormalize=self.run.vecnormalize if self.run is not None else None,
                               num_envs=num_envs, explore=explore, device=self.spec.device, success_key=key,
                               step_timeout=timeout)
        if explore:
            raise BadInput("the onnx path runs the exported graph, which takes the deterministic action; explore is "
                           "only available for the predict path (--explore predict=on)")
        from tui_eval.integrations.sb3.paths.onnx import OnnxPath

        file, source = self.onnx_file, f"{self.onnx_file} (next to the model)"
        if file is None:
            from tui_eval.integrations.sb3.paths.export import RECIPE, export
            from tui_eval.integrations.sb3.paths.policy import load_model

            file = export(load_model(self.checkpoint, self.algo, "cpu"), self.algo, self.checkpoint)
            source = f"{file}, written by tui-eval with {RECIPE}"
        return OnnxPath(name=name, file=file, source=source, recipe=self.recipe, num_envs=num_envs, success_key=key,
                        step_timeout=timeout)
