"""Recurrent state: carried over from the previous episode, or reset on every step."""

from __future__ import annotations

from tui_eval.doctor.probes.base import Case, Counterfactual, agree, max_diff


def _carried_applies(c: Case) -> bool:
    return c.sus.fresh is not None


def _carried_test(c: Case) -> str | None:
    n = c.span.stop
    obs = c.ref.steps("obs")[:n]
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
    return c.t >= 1 and c.ref.stepper is not None and not c.ref.stateless


def _every_step_test(c: Case) -> str | None:
    ref_reset = c.rerun(c.ref_obs(), side=c.ref, reset_each_step=True)
    sus_sent = [c.sus.steps("action_for_env")[c.t]]
    if ref_reset is None or agree(ref_reset[:1], sus_sent) is None:
        return None
    kept = c.rerun(c.ref_obs()[:1], side=c.ref)
    if kept is None or max_diff(kept, sus_sent) in (None, 0.0) or agree(kept, sus_sent) is not None:
        return None  # with its state kept `ref` already gives that action: the state is not what differs
    return (f"with its recurrent state reset just before step {c.t}, `{c.ref.name}`'s action equals the one "
            f"`{c.sus.name}` sent ({sus_sent[0].tolist()}, to 1e-5); with its state kept it sends "
            f"{kept[0].tolist()}")


CARRIED_OVER = Counterfactual(
    name="recurrent state not reset between episodes",
    topic="recurrent",
    cause="`{sus}` carries its recurrent state over from one episode to the next (not reset when an episode "
          "starts)",
    fix="reset the hidden state at every episode's start in `{sus}` (act form: in reset(); rsl_rl: "
        "policy.reset(dones); RLlib: the module's get_initial_state())",
    stage="action", applies=_carried_applies, test=_carried_test)

RESET_EVERY_STEP = Counterfactual(
    name="recurrent state reset every step",
    topic="recurrent",
    cause="`{sus}` resets its recurrent state on every step: its policy never sees its own memory",
    fix="keep the hidden state from one step to the next within an episode (reset it only when an episode "
        "starts), and pass the state the module returns back in on the next call",
    stage="action", applies=_every_step_applies, test=_every_step_test)

PROBES = (CARRIED_OVER, RESET_EVERY_STEP)
