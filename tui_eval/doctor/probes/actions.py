"""The action sent to the env: unsquashed, clipped or scaled differently."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from tui_eval.doctor.probes.base import Case, Counterfactual, agree, continuous, steps_text

MIN_STEPS = 3  # a fitted bound or factor must hold on this many steps


def _box(c: Case) -> gym.spaces.Box | None:
    space = c.ref.action_space or c.sus.action_space
    return space if isinstance(space, gym.spaces.Box) and np.all(np.isfinite(space.low)) else None


def _sent(c: Case) -> tuple[np.ndarray, np.ndarray]:
    return (np.asarray(c.ref.stage("action_for_env", c.t), dtype=float),
            np.asarray(c.sus.stage("action_for_env", c.t), dtype=float))


def _sus_on_ref_obs(c: Case) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    got = c.rerun(c.ref_obs())
    if got is None or len(got) < MIN_STEPS:
        return None
    return [np.asarray(a, dtype=float) for a in c.ref_actions()], [np.asarray(g, dtype=float) for g in got]


def _unsquash(x: np.ndarray, space: gym.spaces.Box) -> np.ndarray:
    return space.low + (np.clip(x, -1.0, 1.0) + 1.0) * (space.high - space.low) / 2.0


def _unsquash_applies(c: Case) -> bool:
    return continuous(c) and _box(c) is not None


def _unsquash_test(c: Case) -> str | None:
    space = _box(c)
    assert space is not None
    ref, sus = _sent(c)
    if ref.shape != sus.shape or np.allclose(space.low, -1) and np.allclose(space.high, 1):
        return None
    # on the reference's observations where `sus` can be rerun (several steps), else the divergent step alone
    refs, got = _sus_on_ref_obs(c) or ([ref], [sus])
    d = agree([_unsquash(g, space) for g in got], refs)
    inside = [a for a in refs if np.all(a > space.low + 1e-6) and np.all(a < space.high - 1e-6)]
    if d is None or not inside:  # actions at the bounds alone agree with any clipping
        return None
    return (f"unsquashed from [-1, 1] to the action space's bounds [{space.low.tolist()}, {space.high.tolist()}], "
            f"`{c.sus.name}`'s actions equal `{c.ref.name}`'s at {steps_text(c, len(got))} (max abs difference "
            f"{d:.2g}); at step {c.t} `{c.ref.name}` sends {ref.tolist()}, `{c.sus.name}` {sus.tolist()}")


def _clip_test(c: Case) -> str | None:
    ref, sus = _sent(c)
    if ref.shape != sus.shape:
        return None
    off = ~np.isclose(ref, sus, atol=1e-5)
    if not off.any() or not np.all(np.abs(ref[off]) > np.abs(sus[off])):
        return None
    bound = float(np.max(np.abs(sus[off])))
    if not np.allclose(np.abs(sus[off]), bound, atol=1e-6):
        return None
    pairs = _sus_on_ref_obs(c)
    if pairs is None:
        return None
    refs, got = pairs
    d = agree(got, [np.clip(a, -bound, bound) for a in refs])
    if d is None or not any(np.any(np.abs(a) > bound + 1e-5) for a in refs[1:] + [ref]):
        return None
    return (f"`{c.ref.name}`'s actions clipped to ±{bound:.4g} equal `{c.sus.name}`'s at {steps_text(c, len(got))} "
            f"on the same observations (max abs difference {d:.2g}); at step {c.t} `{c.ref.name}` sends "
            f"{ref.tolist()}, `{c.sus.name}` {sus.tolist()}")


def _scale_test(c: Case) -> str | None:
    ref, sus = _sent(c)
    if ref.shape != sus.shape or not np.any(np.abs(ref) > 1e-6):
        return None
    k = float(np.median(sus[np.abs(ref) > 1e-6] / ref[np.abs(ref) > 1e-6]))
    if not np.isfinite(k) or abs(k - 1.0) < 1e-4 or abs(k) < 1e-6:
        return None
    pairs = _sus_on_ref_obs(c)
    if pairs is None:
        return None
    refs, got = pairs
    d = agree(got, [k * a for a in refs])
    if d is None:
        return None
    return (f"`{c.ref.name}`'s actions times {k:.4g} equal `{c.sus.name}`'s at {steps_text(c, len(got))} on the "
            f"same observations (max abs difference {d:.2g})")


UNSQUASH = Counterfactual(
    name="action not unsquashed",
    topic="actions",
    cause="`{sus}` sends the policy's squashed action (in [-1, 1]) to the env; `{ref}` unsquashes it to the "
          "action space's bounds",
    # the library's own way is the kind's to say (CheckpointKind.probe_fix)
    fix="unsquash in `{sus}`: low + (action + 1) * (high - low) / 2 with the env's action space, as `{ref}` does",
    stage="action_for_env", applies=_unsquash_applies, test=_unsquash_test)

CLIPPED = Counterfactual(
    name="actions clipped differently",
    topic="actions",
    cause="`{sus}` clips its actions where `{ref}` does not (or at other bounds)",
    fix="clip the same way on both paths (to the same bounds, or on neither)",
    stage="action_for_env", applies=continuous, test=_clip_test)

SCALED = Counterfactual(
    name="actions scaled differently",
    topic="actions",
    cause="`{sus}` scales its actions by another factor than `{ref}`",
    fix="apply the same action scale on both paths (the env's / the deployment's action_scale)",
    stage="action_for_env", applies=continuous, test=_scale_test)

PROBES = (UNSQUASH, CLIPPED, SCALED)
