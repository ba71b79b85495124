"""What a path's envs are doing, read from another thread while they step (for a user waiting on a path)."""

from __future__ import annotations

from typing import Any

from tui_eval.envs.guard import GuardedEnv

_DEPTH = 12  # wrappers to look through


def guarded_envs(env: Any) -> list[GuardedEnv]:
    """The GuardedEnvs of a vector env (through its wrappers); [] when there are none to be found."""
    subs = None
    for _ in range(_DEPTH):
        if env is None:
            return []
        subs = getattr(env, "envs", None)
        if subs is not None:
            break
        env = getattr(env, "env", None)
    found = []
    for sub in subs or []:
        for _ in range(_DEPTH):
            if sub is None or _guarded(sub):
                break
            sub = getattr(sub, "env", None)
        if sub is not None and _guarded(sub):
            found.append(sub)
    return found


def _guarded(env: Any) -> bool:
    """A GuardedEnv, or a guard of the same shape (idle, seed, episode_steps): the multi-agent one."""
    return isinstance(env, GuardedEnv) or getattr(env, "is_seed_guard", False)


def envs_activity(env: Any) -> str | None:
    """"3 episodes in flight, 1200 env steps into them (longest 600)"; None when nothing can be read."""
    running = [e for e in guarded_envs(env) if not e.idle and e.seed is not None]
    if not running:
        return None
    steps = [e.episode_steps for e in running]
    return (f"{len(running)} episode{'s' if len(running) != 1 else ''} in flight, {sum(steps)} env steps into "
            f"them (longest {max(steps)})")
