"""The env as a cause: one path replayed twice on one seed, getting other observations after the same actions.

Paired seeds compare paths only when an episode is a function of its seed and the actions. The run checks this
before it starts (tui_eval/envs/seeding.py) with random actions; the doctor checks it again on the episode it
diagnoses, with the path's own actions: the first path that records its observations is replayed a second time,
and where the two replays got other observations from the env after sending it the same actions, the env is
not a function of its seed. That is a cause of its own, first, with the two replays as its proof. A second
replay whose actions part first proves nothing about the env (the policy is not repeatable) and is left to
the probes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui_eval.doctor.findings import Finding
from tui_eval.doctor.replay import replay
from tui_eval.paths.rerun import Trace, close

ENV_CAUSE = "the env is not a function of its reset seed: the same path gives other episodes on the same seed"
ENV_FIX = ("draw the env's randomness from the reset seed (its own np_random, or the process-wide generators "
           "tui-eval seeds at each reset), not from a generator no seed reaches; until then the paths are compared "
           "statistically")
ENV_TOPIC = "env seeding"


@dataclass
class Unrepeated:
    path: str
    seed: int
    step: int  # the first step whose observation differs (or the step where one replay ended first)
    ended: bool = False  # the replays got the same observations, but one episode ended at another step

    def proof(self) -> str:
        after = "before it had acted" if self.step == 0 else f"after sending the same {self.step} action(s)"
        what = "one of them ended" if self.ended else "the second got other observations from the env"
        return f"proof: `{self.path}` replayed twice on seed {self.seed}: at step {self.step} {what}, {after}"


def replayed_twice(probe: Any, first: Trace, seed: int) -> Unrepeated | None:
    """Where a second replay of `probe`'s path on `seed` parts from `first` in the env's observations after the
    same actions (None: the same episode, a policy that acted otherwise first, or no observations recorded)."""
    if not first.stages.get("obs"):
        return None
    try:
        second = replay(probe, seed)
    except Exception:  # the first replay ran: a failing second one tells nothing about the env
        return None
    obs_a, obs_b = first.stages["obs"], second.stages.get("obs", [])
    act_a, act_b = first.env_actions, second.env_actions
    for t in range(min(len(obs_a), len(obs_b))):
        if not close(obs_a[t], obs_b[t]):
            return Unrepeated(probe.name, seed, t)
        if t < min(len(act_a), len(act_b)) and not close(act_a[t], act_b[t]):
            return None  # the policy parted first, on the same observation: not the env's doing
    if len(act_a) == len(act_b) and first.length != second.length:
        return Unrepeated(probe.name, seed, min(first.length, second.length), ended=True)
    return None


def first_repeatable_check(probes: dict[str, Any], traces: dict[str, Trace], seed: int) -> Unrepeated | None:
    """The twice-replay of the first path that records its observations."""
    for name, trace in traces.items():
        if trace.stages.get("obs"):
            return replayed_twice(probes[name], trace, seed)
    return None


def env_finding(paths: list[str], evidence: str) -> Finding:
    return Finding(cause=ENV_CAUSE, evidence=evidence, fix=ENV_FIX, paths=paths, stage="env", seed=None, step=None,
                   score=1000, topic=ENV_TOPIC)
