"""The observation a policy is given: its parts in another order, or float64 where the other path rounds it
to float32 (what matters where observations are large: world positions, timestamps)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from tui_eval.doctor.probes.base import Case, Counterfactual, agree, continuous, steps_text

MAX_SWAP_SIZE = 24  # every pair of elements is tried up to this observation size
MIN_STEPS = 3


def _vector(c: Case) -> np.ndarray | None:
    obs = c.ref.stage("obs", c.t)
    if c.ref.trace.inputs is not None:  # a Dict observation: its flat form is not what the policy takes
        return None
    return obs if obs is not None and obs.ndim == 1 and obs.size >= 2 and obs.dtype.kind == "f" else None


def orders(n: int) -> Iterator[tuple[str, np.ndarray]]:
    """Candidate reorderings (index arrays) with how to name them: swaps, reversal, rotations, halves."""
    idx = np.arange(n)
    if n <= MAX_SWAP_SIZE:
        for i in range(n):
            for j in range(i + 1, n):
                p = idx.copy()
                p[[i, j]] = p[[j, i]]
                yield f"elements {i} and {j} swapped", p
    yield "in reverse order", idx[::-1].copy()
    for k in (1, -1):
        yield f"rotated by {k}", np.roll(idx, k)
    if n % 2 == 0:
        yield "its two halves swapped", np.roll(idx, n // 2)


def _order_applies(c: Case) -> bool:
    # a search over orders needs real-valued actions: some order of the input gives the same discrete actions
    # by chance
    return continuous(c) and c.sus.stepper is not None and _vector(c) is not None


def _order_test(c: Case) -> str | None:
    obs = c.ref_obs()
    if len(obs) < MIN_STEPS and c.ref.steps("obs")[c.t + 1:]:
        return None
    want = c.ref_actions()
    for label, perm in orders(len(obs[0])):
        got = c.rerun([o[perm] for o in obs], history=None if c.sus.stateless else
                      [o[perm] for o in c.ref.steps("obs")[: c.t]])
        d = agree(got, want)
        if d is not None:
            return (f"with the observation's {label}, `{c.sus.name}`'s action equals `{c.ref.name}`'s at "
                    f"{steps_text(c)} to 1e-5 (max abs difference {d:.2g})")
    return None


def _precision_applies(c: Case) -> bool:
    obs = c.ref.stage("obs", c.t)
    return (continuous(c) and c.sus.stepper is not None and obs is not None and obs.dtype == np.float64
            and c.ref.trace.inputs is None)


def _as_float32(values: list[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(v, dtype=np.float32).astype(np.float64) for v in values]


def _precision_test(c: Case) -> str | None:
    obs = c.ref_obs()
    history = None if c.sus.stateless else _as_float32(c.ref.steps("obs")[: c.t])
    d = agree(c.rerun(_as_float32(obs), history=history), c.ref_actions())
    if d is None:
        return None
    rounding = max(float(np.max(np.abs(o - r))) for o, r in zip(obs, _as_float32(obs)))
    return (f"with the float64 observation rounded to float32 (a change of up to {rounding:.2g}), "
            f"`{c.sus.name}`'s action equals `{c.ref.name}`'s at {steps_text(c)} to 1e-5 (max abs difference {d:.2g})")


ORDER = Counterfactual(
    name="observation parts in another order",
    topic="observation order",
    cause="`{sus}` gives its policy the observation's parts in another order than `{ref}` (e.g. joint order)",
    fix="build `{sus}`'s observation in the order the policy was trained on (the env's observation space / the "
        "training obs groups, in order)",
    stage="obs", applies=_order_applies, test=_order_test)

PRECISION = Counterfactual(
    name="float64 vs float32",
    topic="precision",
    cause="`{sus}` computes on the float64 observation where `{ref}` rounds it to float32 (float64 vs float32)",
    fix="give the policy float32 observations on both paths (np.asarray(obs, dtype=np.float32)), and keep the "
        "module in float32",
    stage="action", applies=_precision_applies, test=_precision_test)

PROBES = (ORDER, PRECISION)
