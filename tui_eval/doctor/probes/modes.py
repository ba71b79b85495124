"""How the policy runs: sampling where the other path takes the mode; a torch module left in train mode."""

from __future__ import annotations

from typing import Any

import numpy as np

from tui_eval.doctor.probes.base import Case, Counterfactual, agree, max_diff, steps_text
from tui_eval.paths.rerun import reachable_modules

REPEATS = 4


def _repeat(c: Case, side) -> list[np.ndarray] | None:
    """`side`'s action at step t, asked again on the same input by fresh copies."""
    obs = c.ref.inputs()[c.t]
    out = []
    for _ in range(REPEATS):
        got = c.rerun([obs], side=side)
        if got is None:
            return None
        out.append(got[0])
    return out


def _sampling_applies(c: Case) -> bool:
    return c.sus.stepper is not None and c.ref.stepper is not None


def _sampling_test(c: Case) -> str | None:
    sus, ref = _repeat(c, c.sus), _repeat(c, c.ref)
    if sus is None or ref is None:
        return None
    if max_diff(ref, [ref[0]] * len(ref)) != 0.0 or max_diff(sus, [sus[0]] * len(sus)) in (None, 0.0):
        return None
    shown = ", ".join(str(np.round(np.asarray(a, dtype=float), 4).tolist()) for a in sus)
    return (f"asked {REPEATS} times for its action on the same observation at step {c.t}, `{c.sus.name}` "
            f"returns {shown}; `{c.ref.name}` returns {np.asarray(ref[0]).tolist()} every time")


def _dropout_like(module: Any) -> list[str]:
    import torch

    kinds = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._BatchNorm)
    return sorted({type(m).__name__ for m in module.modules() if isinstance(m, kinds) and m.training})


def _train_applies(c: Case) -> bool:
    if c.sus.stepper is None:
        return False
    return any(_dropout_like(m) for m in reachable_modules(c.sus.stepper()))


def _train_test(c: Case) -> str | None:
    seen: list[str] = []

    def to_eval(stepper: Any) -> None:
        for m in reachable_modules(stepper):
            seen.extend(_dropout_like(m))
            m.eval()

    d = agree(c.rerun(c.ref_obs(), mutate=to_eval), c.ref_actions())
    if d is None:
        return None
    return (f"with its torch module switched to eval mode (it holds {', '.join(sorted(set(seen)))} in train mode), "
            f"`{c.sus.name}`'s action equals `{c.ref.name}`'s at {steps_text(c)} to 1e-5 (max abs difference {d:.2g})")


SAMPLING = Counterfactual(
    name="explore vs deterministic",
    topic="explore",
    cause="`{sus}` samples its actions (explore on); `{ref}` takes the distribution's mode",
    fix="take the distribution's mode in `{sus}` (dist.to_deterministic(); `--explore {sus}=off` for a built-in "
        "path), or sample in both if sampling is what you mean to evaluate",
    stage="action", applies=_sampling_applies, test=_sampling_test)

TRAIN_MODE = Counterfactual(
    name="module left in train mode",
    topic="train mode",
    cause="`{sus}` runs its torch module in train mode (dropout / batch norm active at inference)",
    fix="call module.eval() before evaluating (and run it under torch.no_grad())",
    stage="module_out", applies=_train_applies, test=_train_test)

PROBES = (TRAIN_MODE, SAMPLING)
