"""The observation a policy is given: its parts in another order, or another float precision."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from tui_eval.doctor.probes.base import Case, Counterfactual, agree, continuous, max_diff, steps_text

MAX_SWAP_SIZE = 24  # every pair of elements is tried up to this observation size
MIN_STEPS = 3


def _vector(c: Case) -> np.ndarray | None:
    obs = c.ref.stage("obs", c.t)
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
    return c.t >= 1 and c.sus.stepper is not None and _vector(c) is not None


def _precision_test(c: Case) -> str | None:
    ref_sent, sus_sent = c.ref.steps("action_for_env")[: c.t], c.sus.steps("action_for_env")[: c.t]
    before = max_diff(ref_sent, sus_sent)
    if not before:  # exactly equal before step t: the paths parted at t, not by rounding
        return None
    obs = c.ref.steps("obs")[c.t]
    same_input = agree(c.rerun([obs], history=c.ref.steps("obs")[: c.t]), [c.ref.steps("action_for_env")[c.t]])
    if same_input is None:
        return None
    drift = max_diff([c.ref.steps("obs")[c.t]], [c.sus.steps("obs")[c.t]]) if c.sus.steps("obs") else None
    types = {s.name: np.asarray(s.steps("action_for_env")[0]).dtype.name for s in (c.ref, c.sus)}
    return (f"given `{c.ref.name}`'s observation at step {c.t}, `{c.sus.name}` gives `{c.ref.name}`'s action (max abs "
            f"difference {same_input:.2g}); before step {c.t} their actions differ by at most {before:.2g}, never "
            "exactly zero" + (f", and the observations at step {c.t} by {drift:.2g}" if drift else "")
            + f": rounding compounds through the env (actions as {', '.join(f'{k} {v}' for k, v in types.items())})")


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
    cause="`{sus}` computes at another float precision than `{ref}` (float64 vs float32): tiny differences grow "
          "until the episodes part",
    fix="run both paths in float32 (cast the observation with np.float32 and keep the module in float32), or "
        "accept the difference: it is rounding, not a different policy",
    stage="action", applies=_precision_applies, test=_precision_test)

PROBES = (ORDER, PRECISION)
