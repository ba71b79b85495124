"""The observation normalizer: missing from one path (an export without it), or with other statistics."""

from __future__ import annotations

import numpy as np

from tui_eval.doctor.probes.base import Case, Counterfactual, agree, steps_text


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

OTHER_STATISTICS = Counterfactual(
    name="observation normalizer with other statistics",
    topic="normalizer",
    cause="`{sus}`'s observation normalizer holds other statistics than `{ref}`'s (a stale export, or "
          "statistics of another iteration)",
    fix="export `{sus}` again from this checkpoint (its normalizer's mean and std are saved with the weights), "
        "or load the normalizer state that belongs to the weights",
    stage="env_to_module", applies=_other_applies, test=_other_test)

PROBES = (MISSING, OTHER_STATISTICS)
