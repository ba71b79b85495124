"""The env an SB3 path steps: the env id with its kwargs and rl-zoo3's `env_wrapper`, as enjoy.py makes it
(`make_vec_env(wrapper_class=...)`), each sub-env then a GuardedEnv seeded from the run's feed.

The GuardedEnv is the outermost wrapper: returns, seeds, success (`info["is_success"]`) and invalid episodes are
tui-eval's measurement of the env as the policy sees it, never SB3's Monitor or VecEnv bookkeeping. VecNormalize
is not an env wrapper here: the `predict` path applies its observation normalization itself, as the model's own
VecNormalize would (training off, rewards not normalized: rewards are the env's own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from gymnasium.wrappers.vector import DictInfoToList

from tui_eval.envs.guard import GuardedEnv, import_registrations
from tui_eval.errors import BadInput, first_line
from tui_eval.feed import FeedRelay


@dataclass(frozen=True)
class EnvRecipe:
    env_id: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: config.yml's `env_wrapper` (rl-zoo3's format), None: none
    wrappers: Any = None

    def wrapper(self) -> Callable[[gym.Env], gym.Env] | None:
        """The wrapper class rl-zoo3 builds from `env_wrapper` (rl_zoo3.utils.get_wrapper_class)."""
        if not self.wrappers:
            return None
        try:
            from rl_zoo3.utils import get_wrapper_class
        except ImportError:
            raise BadInput(f"the run's config.yml wraps the env ({self.wrappers}); rebuilding that needs rl_zoo3: "
                           "pip install rl_zoo3") from None
        try:
            return get_wrapper_class({"env_wrapper": self.wrappers})
        except Exception as exc:  # a wrapper's module may be missing or raise on import
            raise BadInput(f"cannot build the run's env_wrapper {self.wrappers}: {first_line(exc)}") from None

    def make(self) -> gym.Env:
        """One env, as enjoy.py makes each of its sub-envs (no GuardedEnv: the doctor's replays and `--path`)."""
        import_registrations()
        env = gym.make(self.env_id, **self.kwargs)
        wrap = self.wrapper()
        return wrap(env) if wrap is not None else env


def make_vector_env(recipe: EnvRecipe, num_envs: int, relay: FeedRelay, success_key: str | None,
                    step_timeout: float | None) -> gym.vector.VectorEnv:
    """`num_envs` sub-envs stepped in sync (NEXT_STEP autoreset, per-env infos: what `play_vector` reads)."""
    import_registrations()
    wrap = recipe.wrapper()

    def guard(env: gym.Env) -> gym.Wrapper:
        return GuardedEnv(env, feed=relay, success_key=success_key, step_timeout=step_timeout)

    wrappers: list[Any] = [wrap, guard] if wrap is not None else [guard]
    vec = gym.make_vec(recipe.env_id, num_envs=num_envs, vectorization_mode="sync", wrappers=wrappers,
                       **recipe.kwargs)
    return DictInfoToList(vec)
