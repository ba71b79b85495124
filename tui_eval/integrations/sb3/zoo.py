"""An rl-zoo3 run folder (`logs/<algo>/<env>_<n>/`), read as rl-zoo3's `enjoy.py` reads it, offline.

Layout (rl-zoo3 2.x): the final model `<env>.zip`, `best_model.zip` (EvalCallback), numbered checkpoints
`rl_model_<N>_steps.zip` (CheckpointCallback), `evaluations.npz`, and a subfolder `<env>/` with `config.yml` (the
hyperparameters: `normalize`, `env_wrapper`, `env_kwargs`, `frame_stack`), `args.yml` (the command line: `algo`,
`env`, `seed`, `env_kwargs`) and `vecnormalize.pkl`. Both YAML files are `yaml.dump`s of an OrderedDict; they are
read here with a safe loader that knows that one tag (enjoy.py uses yaml.UnsafeLoader, which runs any tag).

enjoy.py plays the final model unless told `--load-best` / `--load-checkpoint N`; tui-eval plays the file the user
passes, and for a folder the final model, and says which. rl-zoo3 keeps ONE `vecnormalize.pkl` per run, rewritten
at each new best and at the end: a best or numbered checkpoint is played with statistics it was not trained
with at that point (rl-zoo3 issue 282), which the header says.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tui_eval.errors import BadInput

CONFIG, ARGS, STATS = "config.yml", "args.yml", "vecnormalize.pkl"
NUMBERED = re.compile(r"^rl_model_(\d+)_steps\.zip$")
#: hyperparameters that change the env in ways the kind does not rebuild yet
UNSUPPORTED = ("frame_stack", "vec_env_wrapper")


def stats_folder(folder: Path) -> Path | None:
    """The run's `<env>/` subfolder (holding config.yml or args.yml), or None: not an rl-zoo3 run folder."""
    if not folder.is_dir():
        return None
    for child in sorted(folder.iterdir()):
        if child.is_dir() and ((child / CONFIG).is_file() or (child / ARGS).is_file()):
            return child
    return None


def numbered(folder: Path) -> list[tuple[int, Path]]:
    """The run's `rl_model_<N>_steps.zip`, by N."""
    found = [(int(m.group(1)), p) for p in folder.glob("rl_model_*_steps.zip") if (m := NUMBERED.match(p.name))]
    return sorted(found)


@dataclass
class ZooRun:
    folder: Path
    stats: Path
    env_id: str
    algo: str | None  # from args.yml (or the folder above the run), None when neither says
    algo_source: str  # where `algo` was read: args.yml's path, or the run folder's parent folder
    seed: int | None
    hyperparams: dict[str, Any]
    env_kwargs: dict[str, Any]
    #: VecNormalize's kwargs as enjoy.py loads it (norm_reward off), None: the run does not normalize
    normalize: dict[str, Any] | None
    vecnormalize: Path | None
    notes: list[str] = field(default_factory=list)

    @property
    def wrappers(self) -> Any:
        """config.yml's `env_wrapper` (a class path, a list of them, or dicts with kwargs), None when absent."""
        return self.hyperparams.get("env_wrapper")

    def model(self) -> Path:
        """The model enjoy.py plays by default: the final `<env>.zip`; BadInput (one line) when absent."""
        final = self.folder / f"{self.stats.name}.zip"
        if final.is_file():
            return final
        others = [p.name for p in sorted(self.folder.glob("*.zip"))]
        if others:
            raise BadInput(f"{self.folder} has no final model {final.name} (rl-zoo3's enjoy.py plays it by default); "
                           f"pass one of its models instead: {', '.join(others[:4])}")
        raise BadInput(f"{self.folder} is an rl-zoo3 run folder without a model (no {final.name}, best_model.zip "
                       "or rl_model_<N>_steps.zip); pass the folder of a run that saved one")

    def which(self, model: Path) -> str:
        """What `model` is in this run, and what statistics it is played with."""
        if model.name == f"{self.stats.name}.zip":
            return "the run's final model (as rl-zoo3's enjoy.py plays by default)"
        what = "the run's best model (enjoy.py --load-best)" if model.name == "best_model.zip" else (
            f"checkpoint at step {m.group(1)} (enjoy.py --load-checkpoint {m.group(1)})"
            if (m := NUMBERED.match(model.name)) else f"{model.name}, a model in the run folder")
        if self.vecnormalize is not None:
            what += ("; played with the run's final VecNormalize statistics, as enjoy.py plays it: rl-zoo3 keeps one "
                     "vecnormalize.pkl per run, so these are not the statistics this model had (rl-zoo3 issue 282)")
        return what


def read_run(folder: Path) -> ZooRun:
    """The run folder's settings; BadInput (one line) for what enjoy.py could not play either."""
    stats = stats_folder(folder)
    assert stats is not None  # the caller found it
    if not (stats / CONFIG).is_file():  # rl-zoo3 writes both files; without it, enjoy.py drops VecNormalize
        raise BadInput(f"{stats / CONFIG} is missing: it says how the run normalizes and wraps its env (enjoy.py "
                       "would play without either); copy it back from the run")
    hyperparams = _yaml(stats / CONFIG)
    args = _yaml(stats / ARGS) if (stats / ARGS).is_file() else {}
    env_id = str(args.get("env") or stats.name)
    env_kwargs = dict(hyperparams.get("env_kwargs") or {})
    if args.get("env_kwargs") is not None:  # enjoy.py: args.yml's env_kwargs replace config.yml's
        env_kwargs = dict(args["env_kwargs"])
    for key in UNSUPPORTED:
        if hyperparams.get(key):
            raise BadInput(f"{stats / CONFIG} sets {key}, which the sb3 kind does not rebuild yet; evaluate a run "
                           f"without {key}")
    normalize = _normalize_kwargs(hyperparams.get("normalize", (stats / "obs_rms.pkl").is_file()), stats)
    vecnormalize = stats / STATS if normalize is not None else None
    if vecnormalize is not None and not vecnormalize.is_file():
        raise BadInput(f"{stats / CONFIG} says the run normalizes, but {vecnormalize} is missing (enjoy.py stops "
                       "there too); copy the run's vecnormalize.pkl back")
    algo = args.get("algo") or (folder.parent.name if folder.parent.name.islower() else None)
    source = str(stats / ARGS) if args.get("algo") else f"the folder above the run ({folder.parent}; no {ARGS})"
    seed = args.get("seed") if isinstance(args.get("seed"), int) else None
    return ZooRun(folder, stats, env_id, str(algo) if algo else None, source, seed, hyperparams, env_kwargs,
                  normalize, vecnormalize)


class _Loader(yaml.SafeLoader):
    """yaml's safe loader, plus the one tag rl-zoo3's files carry (an OrderedDict, as pairs)."""


def _ordered_dict(loader: Any, node: Any) -> dict[str, Any]:
    pairs = loader.construct_sequence(node, deep=True)
    return {k: v for k, v in (pairs[0] if pairs else [])}


_Loader.add_constructor("tag:yaml.org,2002:python/object/apply:collections.OrderedDict", _ordered_dict)


def _yaml(file: Path) -> dict[str, Any]:
    try:
        data = yaml.load(file.read_text(), Loader=_Loader)  # a safe loader with one tag added
    except yaml.YAMLError as exc:
        raise BadInput(f"{file} is not YAML tui-eval can read safely ({str(exc).splitlines()[0]}); "
                       "it should be rl-zoo3's own") from None
    except (ValueError, TypeError, IndexError) as exc:  # a cut file: the OrderedDict's pairs end mid-pair
        raise BadInput(f"checkpoint file {file} is unreadable ({exc}); copy it again from where the checkpoint "
                       "was saved, or pass another checkpoint") from None
    if not isinstance(data, dict):
        raise BadInput(f"{file} holds no mapping; it should be rl-zoo3's own")
    return data


def _normalize_kwargs(value: Any, stats: Path) -> dict[str, Any] | None:
    """config.yml's `normalize` as enjoy.py reads it (get_saved_hyperparams, test mode): rewards not normalized."""
    if not value:
        return None
    if isinstance(value, str):
        try:
            kwargs = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise BadInput(f"{stats / CONFIG}: normalize is {value!r}, not a literal dict tui-eval reads; write it "
                           "as {'norm_obs': True, 'norm_reward': False}") from None
    elif isinstance(value, dict):
        kwargs = dict(value)
    else:
        kwargs = {"norm_obs": bool(value)}
    kwargs["norm_reward"] = False
    return kwargs
