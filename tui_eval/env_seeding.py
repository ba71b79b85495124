"""Does an env repeat itself from its reset seed? Checked before a run, because an exact comparison rests on it.

With explore off on both paths, tui-eval calls one differing seed conclusive ("DIFFER (exact)"). That holds
only when an episode is a function of its reset seed and the actions. An env that draws from an unseeded
generator (`np.random.randint` in `step`, as RLlib's own `CartPoleWithDictObservationSpace` does, or
`random.random()`, or the wall clock) gives other episodes on the same seed, and the exact verdict would then
report the env, not the paths. So two episodes are played from `reset(seed=S)` with the same seeded random
actions; where they part, the comparison is made statistical (its intervals do not need repeatable seeds).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

#: steps of each probe episode: enough for a per-step random draw to show, cheap next to loading a policy
PROBE_STEPS = 50
PROBE_SEED = 12345
#: a probe that takes longer (a frozen or very slow simulator) is abandoned and the env not judged
PROBE_SECONDS = 5.0


def _flat(space: gym.Space, obs: Any) -> np.ndarray:
    try:
        return np.asarray(gym.spaces.flatten(space, obs), dtype=np.float64)
    except Exception:  # a space flatten does not know: compare what numpy makes of it
        return np.asarray(obs, dtype=object).ravel()


def _trace(make_env: Callable[[], gym.Env], seed: int, steps: int) -> list[tuple[np.ndarray, float]]:
    env = make_env()
    try:
        env.action_space.seed(seed)
        obs, _ = env.reset(seed=seed)
        trace = [(_flat(env.observation_space, obs), 0.0)]
        for _ in range(steps):
            obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            trace.append((_flat(env.observation_space, obs), float(reward)))
            if terminated or truncated:
                break
        return trace
    finally:
        env.close()


def _traces_within(make_env: Callable[[], gym.Env], seed: int, steps: int, seconds: float,
                   ) -> tuple[list, list] | None:
    """Two probe episodes, played in a daemon thread so a step that never returns cannot hold the run."""
    result: list[tuple[list, list]] = []

    def play() -> None:
        try:
            result.append((_trace(make_env, seed, steps), _trace(make_env, seed, steps)))
        except Exception:
            pass

    thread = threading.Thread(target=play, name="tui-eval-seed-probe", daemon=True)
    thread.start()
    thread.join(seconds)
    return result[0] if result else None


@dataclass(frozen=True)
class SeedCheck:
    """What the probe found: `repeats` True, False, or None (not checked: no single env to make, it broke or
    took too long); `line` says it for the facts shown before a run."""

    repeats: bool | None
    line: str


NOT_CHECKED = SeedCheck(None, "not checked (no single env to probe, or it broke or took over 5 s): exact "
                              "comparisons assume the env repeats itself from its reset seed")
REPEATS = SeedCheck(True, "repeats itself from its reset seed (checked: two episodes, same seed and actions)")


def check_seed_repeat(make_env: Callable[[], gym.Env], name: str, seed: int = PROBE_SEED,
                      steps: int = PROBE_STEPS) -> SeedCheck:
    """Two episodes from `reset(seed)` with the same seeded actions, compared for `steps` steps."""
    traces = _traces_within(make_env, seed, steps, PROBE_SECONDS)
    if traces is None:  # broken, or too slow to probe: the paths will report such an env; not judged here
        return NOT_CHECKED
    first, second = traces
    parted = f"{name} is not a function of its reset seed: two episodes from reset(seed={seed}) with the same actions"
    for step, ((obs_a, r_a), (obs_b, r_b)) in enumerate(zip(first, second, strict=False)):
        same_obs = obs_a.shape == obs_b.shape and (
            np.array_equal(obs_a, obs_b, equal_nan=True) if obs_a.dtype != object else bool(np.all(obs_a == obs_b)))
        if not same_obs or not (r_a == r_b or (np.isnan(r_a) and np.isnan(r_b))):
            return _differs(f"{parted} gave another {'observation' if not same_obs else 'reward'} at step {step}")
    if len(first) != len(second):
        return _differs(f"{parted} ended after {len(first) - 1} and {len(second) - 1} steps")
    return REPEATS


def _differs(why: str) -> SeedCheck:
    return SeedCheck(False, f"{why}; the comparison is statistical, not exact per seed")
