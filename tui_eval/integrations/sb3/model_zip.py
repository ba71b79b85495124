"""What a Stable-Baselines3 model zip says, read offline without unpickling anything.

`model.save()` writes a zip holding `data` (JSON whose values are cloudpickled where they are objects, with a
readable summary beside each: a class's `__module__`, a space's `_shape` and `dtype`), `policy.pth` and
`_stable_baselines3_version`. Loading the model runs the pickled code; this module only reads the JSON, so that a
zip that is not SB3's, or of an algorithm the kind does not run, is a one-line error before anything is loaded.
The algorithm is not stored by name: it is told from the policy class's module and the algorithm's own attributes.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_eval.errors import BadInput

#: the algorithms the kind runs (SB3's own; sb3-contrib's are not)
ALGOS = ("ppo", "a2c", "dqn", "sac", "td3")
OFF_POLICY = ("dqn", "sac", "td3")


@dataclass(frozen=True)
class ZipFacts:
    algo: str  # one of ALGOS
    policy_module: str
    obs_shape: str
    #: a Dict observation space's keys (MultiInputPolicy), None for any other space
    obs_keys: tuple[str, ...] | None
    action_space: str  # "Discrete(2)", "Box(-2.0, 2.0, (1,))" as far as the JSON tells
    seed: int | None  # the seed training was given (model.seed), if any
    n_envs: int | None
    sb3_version: str


def read_zip(path: Path) -> ZipFacts:
    """The zip's facts; BadInput (one line) when it is not an SB3 model of an algorithm the kind runs."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "data" not in names or "policy.pth" not in names:
                raise BadInput(f"{path} is a zip but not a whole Stable-Baselines3 model (no data and policy.pth "
                               "inside: a damaged copy, or a zip model.save() did not write); copy it again, or pass "
                               "a zip written by model.save()")
            data = json.loads(archive.read("data"))
            version = archive.read("_stable_baselines3_version").decode().strip() \
                if "_stable_baselines3_version" in names else "?"
    except zipfile.BadZipFile:
        raise BadInput(f"{path} is not a zip file; pass a Stable-Baselines3 model saved by model.save()") from None
    except (ValueError, UnicodeDecodeError):
        raise BadInput(f"{path}: its data entry is not SB3's JSON; pass a zip written by model.save()") from None
    module = str((data.get("policy_class") or {}).get("__module__", "?"))
    observations = data.get("observation_space") or {}
    keys = _dict_keys(observations)
    return ZipFacts(algo=algo_of(module, data, path), policy_module=module,
                    obs_shape=str(observations.get("spaces") if keys else observations.get("_shape", "?")),
                    obs_keys=keys,
                    action_space=_space_text(data.get("action_space") or {}),
                    seed=data.get("seed") if isinstance(data.get("seed"), int) else None,
                    n_envs=data.get("n_envs") if isinstance(data.get("n_envs"), int) else None,
                    sb3_version=version)


def algo_of(module: str, data: dict[str, Any], path: Path) -> str:
    """The algorithm from its policy's module (SAC, TD3, DQN have their own), PPO and A2C (which share
    ActorCriticPolicy) apart by PPO's clip_range."""
    for algo in ("dqn", "sac", "td3"):
        if module.startswith(f"stable_baselines3.{algo}."):
            return algo
    if module.startswith("stable_baselines3.common.policies"):
        return "ppo" if "clip_range" in data else "a2c"
    raise BadInput(f"{path} holds a model of an algorithm the sb3 kind does not run (its policy comes from "
                   f"{module}); it runs {', '.join(a.upper() for a in ALGOS)}")


def check_algo(algo: str, where: str) -> str:
    """`algo` lowercased when the kind runs it, else BadInput naming where it was read."""
    name = str(algo).lower()
    if name not in ALGOS:
        raise BadInput(f"{where} names algorithm {algo!r}, which the sb3 kind does not run; it runs "
                       f"{', '.join(a.upper() for a in ALGOS)}")
    return name


def _dict_keys(space: dict[str, Any]) -> tuple[str, ...] | None:
    """A Dict space's keys from its readable summary (`spaces`: "{'position': Box(...), ...}"), else None."""
    if not str(space.get(":type:", "")).endswith(".Dict'>"):
        return None
    return tuple(re.findall(r"'([^']+)': \w+\(", str(space.get("spaces", ""))))


def _space_text(space: dict[str, Any]) -> str:
    kind = str(space.get(":type:", "")).rsplit(".", 1)[-1].rstrip("'>")
    if kind == "Discrete":
        return f"Discrete({space.get('n', '?')})"
    if kind == "Box":
        return f"Box(low {space.get('low_repr', space.get('low', '?'))}, high {space.get('high_repr', '?')}, " \
               f"shape {space.get('_shape', '?')})"
    return kind or "?"
