"""The observation normalizer: missing from one path (an export without it), or with other statistics."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from tui_eval.doctor.probes.base import Case, Counterfactual, agree, continuous, steps_text


def _ref_normalizes(c: Case) -> bool:
    obs, z = c.ref.stage("obs", c.t), c.ref.stage("env_to_module", c.t)
    return obs is not None and z is not None and obs.shape == z.shape and not np.allclose(obs, z, atol=1e-6)


def _sus_normalizer_seen(c: Case) -> bool:
    obs, z = c.sus.stage("obs", c.t), c.sus.stage("env_to_module", c.t)
    return obs is not None and z is not None and obs.shape == z.shape and not np.allclose(obs, z, atol=1e-6)


def _missing_applies(c: Case) -> bool:
    return c.sus.stepper is not None and _ref_normalizes(c) and not _sus_normalizer_seen(c)


def _missing_test(c: Case) -> str | None:
    d = agree(c.rerun(c.ref_obs("env_to_module"),
                      history=None if c.sus.stateless else c.ref.steps("env_to_module")[: c.t]), c.ref_actions())
    if d is None:
        return None
    return (f"with `{c.ref.name}`'s normalized observation (its env_to_module stage) as input, `{c.sus.name}`'s "
            f"action equals `{c.ref.name}`'s at {steps_text(c)} to 1e-5 (max abs difference {d:.2g}); on the raw "
            f"observation it sends {np.round(np.asarray(c.sus.stage('action_for_env', c.t), dtype=float), 4).tolist()}"
            f" instead of {np.round(np.asarray(c.ref.stage('action_for_env', c.t), dtype=float), 4).tolist()}")


def _bounded_box(c: Case) -> gym.spaces.Box | None:
    space = c.ref.action_space or c.sus.action_space
    bounded = isinstance(space, gym.spaces.Box) and np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))
    return space if bounded and not (np.allclose(space.low, -1) and np.allclose(space.high, 1)) else None


def _missing_and_squashed_applies(c: Case) -> bool:
    return _missing_applies(c) and continuous(c) and _bounded_box(c) is not None


def _missing_and_squashed_test(c: Case) -> str | None:
    """Both omissions of an export that holds the bare policy: normalized observations in and the output unsquashed
    make `sus` agree, where either alone does not."""
    space = _bounded_box(c)
    assert space is not None
    def unsquash(actions: list[np.ndarray]) -> list[np.ndarray]:
        return [space.low + (np.clip(np.asarray(a, dtype=float), -1, 1) + 1) * (space.high - space.low) / 2
                for a in actions]

    got = c.rerun(c.ref_obs("env_to_module"),
                  history=None if c.sus.stateless else c.ref.steps("env_to_module")[: c.t])
    raw = c.rerun(c.ref_obs())
    if got is None or raw is None:
        return None
    d = agree(unsquash(got), c.ref_actions())
    alone = agree(got, c.ref_actions()) is not None or agree(unsquash(raw), c.ref_actions()) is not None
    if d is None or alone:  # one omission alone is its own probe's finding
        return None
    return (f"with `{c.ref.name}`'s normalized observation (its env_to_module stage) as input and its output "
            f"unsquashed from [-1, 1] to the action space's bounds [{space.low.tolist()}, {space.high.tolist()}], "
            f"`{c.sus.name}`'s action equals `{c.ref.name}`'s at {steps_text(c)} to 1e-5 (max abs difference "
            f"{d:.2g}); neither change alone makes them agree")


def _other_applies(c: Case) -> bool:
    z_ref, z_sus = c.ref.stage("env_to_module", c.t), c.sus.stage("env_to_module", c.t)
    obs_ref, obs_sus = c.ref.stage("obs", c.t), c.sus.stage("obs", c.t)
    return (c.sus.head is not None and _ref_normalizes(c) and _sus_normalizer_seen(c) and z_sus is not None
            and z_ref is not None and obs_ref is not None and obs_sus is not None
            and np.allclose(obs_ref, obs_sus, atol=1e-6) and not np.allclose(z_ref, z_sus, atol=1e-6))


def _other_test(c: Case) -> str | None:
    head = c.sus.head
    assert head is not None
    d = agree([head(z) for z in c.ref_obs("env_to_module")], c.ref_actions())
    if d is None:
        return None
    proof = (f"with `{c.ref.name}`'s normalized observation in place of its own, `{c.sus.name}`'s action equals "
             f"`{c.ref.name}`'s at {steps_text(c)} to 1e-5 (max abs difference {d:.2g})")
    if c.ref.stats is not None and c.sus.stats is not None and c.ref.stats[0].shape == c.sus.stats[0].shape:
        dm = float(np.max(np.abs(c.ref.stats[0] - c.sus.stats[0])))
        ds = float(np.max(np.abs(c.ref.stats[1] - c.sus.stats[1])))
        proof += f"; the normalizers' statistics differ by up to {dm:.3g} (mean) and {ds:.3g} (std)"
    return proof


MISSING = Counterfactual(
    name="observation normalizer missing",
    topic="normalizer",
    cause="`{sus}` lacks the observation normalizer: it feeds raw observations to a policy trained on "
          "normalized ones (`{ref}` normalizes them)",
    # the library's own way to keep the normalizer is the kind's to say (CheckpointKind.probe_fix)
    fix="export the policy with its observation normalizer inside, or normalize with the checkpoint's statistics "
        "before calling `{sus}`",
    stage="env_to_module", applies=_missing_applies, test=_missing_test)

MISSING_AND_SQUASHED = Counterfactual(
    name="observation normalizer missing and action not unsquashed",
    topic="normalizer",
    cause="`{sus}` lacks the observation normalizer and sends the policy's squashed action (in [-1, 1]) to the env: "
          "it holds the bare policy, where `{ref}` normalizes observations and unsquashes actions to the bounds",
    fix="export the policy with its observation normalizer and the action unsquashing inside, or apply both around "
        "`{sus}`: normalize with the checkpoint's statistics before, low + (action + 1) * (high - low) / 2 after",
    stage="env_to_module", applies=_missing_and_squashed_applies, test=_missing_and_squashed_test)

OTHER_STATISTICS = Counterfactual(
    name="observation normalizer with other statistics",
    topic="normalizer",
    cause="`{sus}`'s observation normalizer holds other statistics than `{ref}`'s (a stale export, or "
          "statistics of another iteration)",
    fix="export `{sus}` again from this checkpoint (its normalizer's mean and std are saved with the weights), "
        "or load the normalizer state that belongs to the weights",
    stage="env_to_module", applies=_other_applies, test=_other_test)

PROBES = (MISSING, MISSING_AND_SQUASHED, OTHER_STATISTICS)
