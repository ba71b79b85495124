"""Counterfactual probes, one module per family of deployment mistakes, registered in `PROBES`.

`run_probes(a, b, step)` tries each probe that applies, with `b` transformed toward `a`, then `a`
toward `b`; the first probe whose transformed path agrees with the other gives its proof. Probes run
only at the divergent step (and the few steps after it, on the reference's observations), so a
diagnosis stays fast. Order matters: a probe that would also explain later ones comes first (a
sampling path matches nothing else, a module in train mode looks like one that samples; unsquash is
a fixed scale).
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_eval.doctor.probes import actions, connectors, modes, normalizer, observations, recurrent
from tui_eval.doctor.probes.base import Case, Counterfactual
from tui_eval.paths.rerun import Side

PROBES: tuple[Counterfactual, ...] = (
    modes.TRAIN_MODE,  # dropout also makes a policy's answers vary: it comes before sampling
    modes.SAMPLING,
    *recurrent.PROBES,
    *normalizer.PROBES,
    *connectors.PROBES,
    *actions.PROBES,
    *observations.PROBES,
)


@dataclass
class Proven:
    probe: Counterfactual
    ref: str
    sus: str
    proof: str
    #: the checkpoint kind's own fix for this probe's mistake (CheckpointKind.probe_fix), None: the probe's
    own_fix: str | None = None

    @property
    def cause(self) -> str:
        return self.probe.cause.format(sus=self.sus, ref=self.ref)

    @property
    def fix(self) -> str:
        return (self.own_fix or self.probe.fix).format(sus=self.sus, ref=self.ref)


def run_probes(a: Side, b: Side, step: int, skip: tuple[str, ...] = ()) -> tuple[Proven | None, list[str]]:
    """The first proven mistake between `a` and `b` at `step` (None when no probe makes them agree), and notes
    on probes that failed to run."""
    notes: list[str] = []
    for probe in PROBES:
        if probe.name in skip:
            continue
        for ref, sus in ((a, b), (b, a)):
            case = Case(ref, sus, step)
            try:
                if not probe.applies(case):
                    continue
                proof = probe.test(case)
            except Exception as exc:  # a probe that cannot run on this path proves nothing
                notes.append(f"probe '{probe.name}' on {sus.name}: {type(exc).__name__}: {exc}")
                continue
            if proof:
                return Proven(probe, ref.name, sus.name, proof), notes
    return None, notes
