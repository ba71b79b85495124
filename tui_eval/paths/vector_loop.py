"""The episode loop over a Gymnasium vector env of GuardedEnvs, for any path that steps one: which sub-env is
playing, idle or resetting, and one EpisodeRecord for each episode that ends.

The vector env autoresets in NEXT_STEP mode with per-env info dicts, as RLlib's SingleAgentEnvRunner builds it
(`make_guarded_vector_env`: gym.make_vec + DictInfoToList). Each sub-env is a GuardedEnv taking its reset seeds
from the run's feed: one whose feed hands out nothing goes idle (its info says IDLE_KEY) and its steps are not
counted; the step after a sub-env's episode ends is its reset, not counted either. A path gives the loop its
`act(obs) -> actions` (the whole batch at once) and, where its policy keeps a per-env state, `on_reset(indices)`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
from gymnasium.wrappers.vector import DictInfoToList

from tui_eval.envs.guard import (
    BLOCK_KEY,
    IDLE_KEY,
    INVALID_KEY,
    SEED_KEY,
    SUCCESS_KEY,
    GuardedEnv,
    import_registrations,
)
from tui_eval.feed import FeedRelay, SeedFeed
from tui_eval.paths.base import Emit
from tui_eval.records import EpisodeRecord


def make_guarded_vector_env(env_id: str, env_config: dict[str, Any], num_envs: int, relay: FeedRelay,
                            success_key: str | None, step_timeout: float | None) -> gym.vector.VectorEnv:
    """`num_envs` sub-envs stepped in sync, each a GuardedEnv seeded from `relay`."""
    import_registrations()

    def guard(env: gym.Env) -> gym.Wrapper:
        return GuardedEnv(env, feed=relay, success_key=success_key, step_timeout=step_timeout)

    vec = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", wrappers=[guard], **env_config)
    return DictInfoToList(vec)


def record_of(path: str, explore: bool, ret: float, length: int, last_info: dict[str, Any],
              wall_s: float) -> EpisodeRecord:
    """The record of an episode that ended with `last_info` (GuardedEnv's seed, block, success and invalid)."""
    reason = last_info.get(INVALID_KEY)
    return EpisodeRecord(path=path, seed=int(last_info[SEED_KEY]), block=int(last_info[BLOCK_KEY]), ret=ret,
                         length=length, success=last_info.get(SUCCESS_KEY), invalid=reason is not None,
                         reason=reason, wall_s=wall_s, explore=explore)


def play_vector(env: Any, act: Callable[[Any], Any], feed: SeedFeed, emit: Emit,
                record: Callable[[float, int, dict[str, Any], float], EpisodeRecord],
                on_reset: Callable[[Sequence[int]], None] = lambda indices: None) -> int:
    """Step `env` with `act` until every sub-env is idle (or the feed is cancelled); returns the steps taken."""
    n = env.num_envs
    returns, lengths = [0.0] * n, [0] * n
    started, idle, resetting = [time.perf_counter()] * n, [False] * n, [False] * n
    obs, infos = env.reset()
    for i in range(n):
        idle[i] = IDLE_KEY in infos[i]
    on_reset(list(range(n)))
    steps = 0
    while not all(idle) and not feed.cancelled:
        obs, rewards, terminateds, truncateds, infos = env.step(act(obs))
        steps += 1
        now = time.perf_counter()
        on_reset([i for i in range(n) if resetting[i]])  # their obs is a reset's
        for i in range(n):
            if IDLE_KEY in infos[i]:  # an idle env that ends was handed a seed: its next step is a reset
                resetting[i] = bool(terminateds[i])
                idle[i] = not resetting[i]
            elif resetting[i]:  # the step after a done is the sub-env's reset (NEXT_STEP)
                resetting[i], idle[i] = False, False
                returns[i], lengths[i], started[i] = 0.0, 0, now
            elif not idle[i]:
                returns[i] += float(rewards[i])
                lengths[i] += 1
                if terminateds[i] or truncateds[i]:
                    emit(record(returns[i], lengths[i], infos[i], now - started[i]))
                    resetting[i] = True
    return steps
