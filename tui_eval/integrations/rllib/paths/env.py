"""Envs built exactly as RLlib 2.60's `SingleAgentEnvRunner.make_env` builds them, for every RLlib path.

RLlib's rule: `config.env` that is a name in Tune's registry (`ray.tune.register_env`) or a callable
is called with an `EnvContext(env_config, worker_index, num_workers, remote)` (the same context for
every sub-env); anything else is a Gymnasium id (`module:EnvId` imports the module first) and
`env_config` becomes `gym.make` keyword arguments (so `{"max_episode_steps": 100}` sets the time limit).
Sub-envs are stepped by `gym.make_vec` and their infos turned into a list per env (`DictInfoToList`).
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from tui_eval.envs.guard import import_registrations
from tui_eval.errors import BadInput, first_line
from tui_eval.user.main_block import main_block_hint

_ids = itertools.count()


def _tune_creator(name: str) -> Callable | None:
    from ray.tune.registry import ENV_CREATOR, _global_registry

    if _global_registry.contains(ENV_CREATOR, name):
        return _global_registry.get(ENV_CREATOR, name)
    return None


def _callable_name(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


@dataclass(frozen=True)
class EnvRecipe:
    """How one path's envs are made: the config's `env` and `env_config`, resolved the RLlib way."""

    env: Any  # a Tune-registered name, a Gymnasium id, or a callable(EnvContext) -> Env
    env_config: dict[str, Any] = field(default_factory=dict)
    creator: Callable | None = None  # set when `env` is a Tune name or a callable: RLlib calls it
    source: str = ""  # one line: where the env comes from

    @property
    def name(self) -> str:
        return self.env if isinstance(self.env, str) else _callable_name(self.env)

    def context(self, worker_index: int = 0, num_workers: int = 0, remote: bool = False):
        from ray.rllib.env.env_context import EnvContext

        return EnvContext(dict(self.env_config), worker_index=worker_index, num_workers=num_workers, remote=remote)

    def make_one(self, context=None, *, env_checker: bool = True) -> gym.Env:
        """One env as one of RLlib's sub-envs is made (the creator gets `context`, env_config only).
        `env_checker=False` leaves out Gymnasium's passive checker, for an env that RLlib's own `gym.make`
        wraps again (with the checker), unless env_config itself says."""
        if self.creator is not None:
            context = self.context() if context is None else context.copy_with_overrides(
                env_config=dict(self.env_config))
            return self.creator(context)
        kwargs = self.env_config if env_checker else {"disable_env_checker": True, **self.env_config}
        return gym.make(self.env, **kwargs)

    def make_vec(self, num_envs: int, wrappers: Sequence[Callable[[gym.Env], gym.Env]] = ()) -> gym.vector.VectorEnv:
        """`num_envs` sub-envs stepped in sync with NEXT_STEP autoreset and per-env info dicts, as
        RLlib's local EnvRunner builds them (worker_index 0); `wrappers` go around each sub-env."""
        from gymnasium.wrappers.vector import DictInfoToList

        if self.creator is not None:
            context = self.context()
            env_id = f"tui_eval_user_env_{next(_ids)}-v0"  # RLlib uses one shared id; ours never clash
            creator = self.creator
            gym.register(env_id, entry_point=lambda **_: creator(context))
            kwargs: dict[str, Any] = {}
        else:
            env_id, kwargs = self.env, self.env_config
        vec = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", wrappers=list(wrappers),  # type: ignore[arg-type]
                           **kwargs)  # gymnasium types wrappers as returning Wrapper, RLlib's as Env
        return DictInfoToList(vec)


def resolve_env(env: Any, env_config: dict[str, Any] | None) -> EnvRecipe:
    """The recipe for `config.env`, or BadInput saying how to make the env known."""
    env_config = dict(env_config or {})
    import_registrations()
    if callable(env) and not isinstance(env, str):
        return EnvRecipe(env, env_config, creator=env, source=f"callable {_callable_name(env)}")
    if not isinstance(env, str) or not env:
        raise BadInput(f"the checkpoint's env is {env!r}, neither an env name nor a callable; pass --env ID")
    creator = _tune_creator(env)
    if creator is not None:
        return EnvRecipe(env, env_config, creator=creator,
                         source=f"ray.tune.register_env({env!r}, {_callable_name(creator)})")
    module, _, name = env.rpartition(":")
    if module:  # Gymnasium's "package.module:EnvId": importing the module registers the env
        try:
            importlib.import_module(module)
        except Exception as exc:  # importing the user's module runs its code
            raise BadInput(f"cannot import {module!r} for env {env!r} ({first_line(exc)}); "
                           "check the module name in --env module:EnvId") from None
        creator = _tune_creator(name)
        if creator is not None:
            return EnvRecipe(name, env_config, creator=creator,
                             source=f"ray.tune.register_env({name!r}, {_callable_name(creator)}) in {module}")
    if name in gym.registry:
        return EnvRecipe(env, env_config, source="Gymnasium registry")
    hint = main_block_hint(env)
    if hint is not None:
        raise BadInput(hint)
    raise BadInput(f"env {env!r} is registered neither with ray.tune.register_env nor with Gymnasium; pass "
                   "--import MODULE_OR_FILE (the code that registers it) or --env ID")
