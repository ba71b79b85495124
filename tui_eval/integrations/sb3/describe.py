"""The facts an SB3 checkpoint's header shows: algorithm, model, env, deterministic or not and why, normalization,
the ONNX export the `onnx` path runs."""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version
from typing import Any


def facts_of(kind: Any) -> dict[str, str]:
    """`kind`: the Sb3Kind (not imported here: the kind imports this module)."""
    try:
        lib = version("stable-baselines3")
    except PackageNotFoundError:
        lib = "not installed"
    run, zip_facts, recipe = kind.run, kind.facts, kind.recipe
    facts = {
        "algorithm": f"{kind.algo.upper()} (stable-baselines3 {lib}; saved by {zip_facts.sb3_version})",
        "model": str(kind.checkpoint.name) + (f": {run.which(kind.checkpoint)}" if run is not None else
                                              " (a model.save() zip)"),
        "spaces": (f"Dict observations {zip_facts.obs_shape}" if zip_facts.obs_keys is not None else
                   f"observations of shape {zip_facts.obs_shape}") + f", actions {zip_facts.action_space}",
        "env": recipe.env_id + (f" {json.dumps(recipe.kwargs)}" if recipe.kwargs else "")
        + (f", wrapped by {recipe.wrappers}" if recipe.wrappers else "")
        + (" (from the run's args.yml / config.yml)" if run is not None and not kind.spec.env_id else ""),
        "deterministic": ("no: enjoy.py samples on Atari and MiniGrid" if kind.stochastic() else
                          "yes, as rl-zoo3's enjoy.py plays (model.predict alone samples by default)"),
        "normalization": _normalization(kind),
        "onnx": (f"{kind.onnx_file.name} next to the model, run as it is" if kind.onnx_file is not None else
                 "none next to the model: the onnx path exports with SB3's documented recipe into tui-eval's cache "
                 "(no VecNormalize, no action unscaling or clipping inside, as the recipe writes it)"),
    }
    if run is not None:
        facts["run"] = f"rl-zoo3 run folder {run.folder}"
    return facts


def _normalization(kind: Any) -> str:
    run = kind.run
    if run is None:
        return "none found (a plain zip: VecNormalize statistics are saved apart, in an rl-zoo3 run's vecnormalize.pkl)"
    if run.vecnormalize is None:
        return "none (the run's config.yml does not normalize)"
    return (f"VecNormalize from {run.stats.name}/{run.vecnormalize.name}, loaded as enjoy.py loads it: observations "
            "normalized with the saved statistics (training=False), rewards not (norm_reward=False); the onnx path "
            "applies none unless its graph holds it")
