"""Recurrent state: carried over from the previous episode, or reset on every step."""

from __future__ import annotations

import numpy as np

from tui_eval.doctor.probes.base import Case, Counterfactual, agree


def _carried_applies(c: Case) -> bool:
    return c.sus.fresh is not None


def _carried_test(c: Case) -> str | None:
    n = c.span.stop
    obs = c.ref.inputs()[:n]
    fresh = c.rerun(obs, history=[], fresh=True)
    d = agree(fresh, c.ref.steps("action_for_env")[:n])
    if d is None:
        return None
    as_ran = c.rerun(obs[: c.t + 1], history=[])  # the copy taken before the replayed episode
    if as_ran is None or agree(as_ran, c.ref.steps("action_for_env")[: c.t + 1]) is not None:
        return None  # the policy as it stood does not differ on these inputs: not a state carried over
    return (f"built afresh, `{c.sus.name}` gives `{c.ref.name}`'s actions at steps 0-{n - 1} to 1e-5 (max abs "
            f"difference {d:.2g}); as it ran, after the earlier episodes, it sent "
            f"{as_ran[c.t].tolist()} at step {c.t} where `{c.ref.name}` sent "
            f"{c.ref.steps('action_for_env')[c.t].tolist()}")


def _every_step_applies(c: Case) -> bool:
    return c.t >= 1 and c.ref.stepper is not None and not c.ref.stateless and len(c.sus.steps("obs")) > c.t


def _every_step_test(c: Case) -> str | None:
    n = c.span.stop - c.span.start
    sus_obs = c.sus.inputs()[c.t: c.t + n]
    sus_sent = c.sus.steps("action_for_env")[c.t: c.t + len(sus_obs)]
    ref_reset = c.rerun(sus_obs, side=c.ref, reset_each_step=True)
    d = agree(ref_reset, sus_sent)
    if d is None:
        return None
    kept = c.rerun(sus_obs[:1], side=c.ref)
    if kept is None or agree(kept, sus_sent[:1]) is not None:
        return None  # with its state kept `ref` already gives that action: the state is not what differs
    last = c.t + len(sus_obs) - 1
    return (f"with its recurrent state reset before every step, `{c.ref.name}` gives the actions `{c.sus.name}` "
            f"sent at steps {c.t}-{last} on `{c.sus.name}`'s observations, to 1e-5 (max abs difference {d:.2g}); "
            f"with its state kept, `{c.ref.name}` sends {kept[0].tolist()} at step {c.t} where `{c.sus.name}` sent "
            f"{np.asarray(sus_sent[0]).tolist()}")


CARRIED_OVER = Counterfactual(
    name="recurrent state not reset between episodes",
    topic="recurrent",
    cause="`{sus}` carries its recurrent state over from one episode to the next (not reset when an episode "
          "starts)",
    fix="reset the hidden state at every episode's start in `{sus}` (act form: in reset()), to the module's "
        "initial state",
    stage="action", applies=_carried_applies, test=_carried_test)

RESET_EVERY_STEP = Counterfactual(
    name="recurrent state reset every step",
    topic="recurrent",
    cause="`{sus}` resets its recurrent state on every step: its policy never sees its own memory",
    fix="keep the hidden state from one step to the next within an episode (reset it only when an episode "
        "starts), and pass the state the module returns back in on the next call",
    stage="action", applies=_every_step_applies, test=_every_step_test)

PROBES = (CARRIED_OVER, RESET_EVERY_STEP)
