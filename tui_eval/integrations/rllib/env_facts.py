"""What the RLlib kind says of an env recipe: its line in the header, its known return bounds, and whether a
space the env gives is the one the module was trained on."""

from __future__ import annotations

import json

from tui_eval.integrations.rllib.paths.env import EnvRecipe


def env_line(recipe: EnvRecipe) -> str:
    return recipe.name + (f" {json.dumps(recipe.env_config, default=str)}" if recipe.env_config else "") + \
        f" ({recipe.source})"


def known_bounds(recipe: EnvRecipe) -> tuple[float, float, str] | None:
    from tui_eval.stats import known_return_bounds

    if recipe.creator is not None or set(recipe.env_config) - {"max_episode_steps", "render_mode"}:
        return None  # e.g. CartPole's sutton_barto_reward=True pays 0 / -1 instead of +1 per step
    return known_return_bounds(recipe.env.rpartition(":")[2], recipe.env_config.get("max_episode_steps"))


def spaces_compatible(trained, given) -> bool:
    """Same kind of space and shape, and for Box the same kind of number (float vs integer)."""
    import numpy as np

    if type(trained) is not type(given):
        return False
    if getattr(trained, "shape", None) != getattr(given, "shape", None) or \
            getattr(trained, "n", None) != getattr(given, "n", None):
        return False
    if hasattr(trained, "dtype") and hasattr(given, "dtype") and trained.dtype is not None and given.dtype is not None:
        return np.dtype(trained.dtype).kind == np.dtype(given.dtype).kind
    return True
