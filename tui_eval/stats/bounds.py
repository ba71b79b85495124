"""Return bounds that can be known before the first episode: a time limit times per-step reward bounds.

A bounded return lets the live view use a non-asymptotic confidence sequence (hedged betting, `betting`) that is valid
from the first episode on, and gives an equivalence margin fixed before any data (5% of the range).
"""

from __future__ import annotations

__all__ = ["KNOWN_STEP_REWARDS", "return_bounds_from", "known_return_bounds"]

# Gymnasium env id -> (per-step reward lo, hi, the registry's max_episode_steps, why).
# Left out on purpose: MountainCarContinuous-v0 (a +100 goal bonus on top of -0.1 a^2 with unbounded
# a before clipping) and LunarLander (shaping terms without a simple per-step bound).
KNOWN_STEP_REWARDS: dict[str, tuple[float, float, int, str]] = {
    "CartPole-v0": (1.0, 1.0, 200, "+1 per step"),
    "CartPole-v1": (1.0, 1.0, 500, "+1 per step"),
    "Pendulum-v1": (-16.2736044, 0.0, 200, "-(pi^2 + 0.1*8^2 + 0.001*2^2) .. 0 per step"),
    "MountainCar-v0": (-1.0, 0.0, 200, "-1 per step"),
    "Acrobot-v1": (-1.0, 0.0, 500, "-1 .. 0 per step"),
}


def return_bounds_from(step_reward_bounds: tuple[float, float], max_steps: int) -> tuple[float, float]:
    """Bounds of a return of 0..`max_steps` steps whose rewards each lie in `step_reward_bounds`.

    A return is a sum of L rewards with 0 <= L <= max_steps, so it lies in
    ``[min(0, max_steps * r_lo), max(0, max_steps * r_hi)]`` (0 for an episode cut before its first
    reward; the sum of L terms in [r_lo, r_hi] lies in [L r_lo, L r_hi]).
    """
    r_lo, r_hi = float(step_reward_bounds[0]), float(step_reward_bounds[1])
    if not r_lo <= r_hi:
        raise ValueError(f"per-step reward bounds need lo <= hi, got {step_reward_bounds!r}")
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    return min(0.0, max_steps * r_lo), max(0.0, max_steps * r_hi)


def known_return_bounds(env_id: str, max_episode_steps: int | None = None) -> tuple[float, float, str] | None:
    """(lo, hi, where they came from) for a well-known Gymnasium env, or None when not known.

    `max_episode_steps`: the env's time limit when it is not the registry's default (e.g. a
    TimeLimit wrapper or `gym.make(..., max_episode_steps=N)`); None uses the default of the table.
    """
    entry = KNOWN_STEP_REWARDS.get(env_id)
    if entry is None:
        return None
    r_lo, r_hi, default_steps, why = entry
    steps = default_steps if max_episode_steps is None else int(max_episode_steps)
    lo, hi = return_bounds_from((r_lo, r_hi), steps)
    if not hi > lo:
        return None
    return lo, hi, f"{env_id}: {why} x {steps} steps (time limit)"
