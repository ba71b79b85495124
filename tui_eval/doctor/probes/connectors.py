"""A connector's state (running observation statistics) differs: same module, other module input."""

from __future__ import annotations

import numpy as np

from tui_eval.doctor.probes.base import Case, Counterfactual, agree, steps_text


def _applies(c: Case) -> bool:
    obs, z = c.ref.stage("obs", c.t), c.ref.stage("env_to_module", c.t)
    return (c.sus.logits is not None and c.ref.steps("module_out") != [] and obs is not None and z is not None
            and obs.shape == z.shape and not np.allclose(obs, z, atol=1e-6))


def _test(c: Case) -> str | None:
    logits = c.sus.logits
    assert logits is not None
    span = [s for s in c.span if s < len(c.ref.steps("module_out"))]
    want = [c.ref.steps("module_out")[s] for s in span]
    d = agree([logits(c.ref.steps("env_to_module")[s]) for s in span], want)
    if d is None or not span:
        return None
    return (f"given `{c.ref.name}`'s env_to_module output (its stateful connector's normalized observation), "
            f"`{c.sus.name}`'s module gives `{c.ref.name}`'s module_out at {steps_text(c, len(span))} to 1e-5 (max "
            f"abs difference {d:.2g}): the module is the same, what it is fed differs")


STALE_STATE = Counterfactual(
    name="stale connector state",
    topic="connector state",
    cause="`{sus}` runs the same module on other inputs: its observation statistics (a stateful connector such as "
          "MeanStdFilter, or its own normalization) are stale, not `{ref}`'s",
    fix="restore the observation pipeline with the state the checkpoint saved, and do not reset or rebuild its "
        "stateful steps in your loop",
    stage="env_to_module", applies=_applies, test=_test)

PROBES = (STALE_STATE,)
