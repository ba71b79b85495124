"""Is a differing seed proof that two paths differ? Only once their policies, fed the same observations, send
actions beyond the tolerance; or, where a path's policy cannot be fed, once each path, replayed alone on that seed,
gives its own record again.

With explore off on both paths, one seed whose episodes differ would decide "differ" at once. But an env
whose episode is not a function of its seed (it ignores the seed, draws from a generator shared with other
sub-envs, or a simulator that does not repeat itself bit for bit on a GPU) gives such a seed with identical
paths. So the first differing seed is replayed on each path in a fresh process, alone: if each gives the return,
validity and success it recorded, the difference lies in the paths (`PROVEN`); if not, the env does not repeat
itself from its seed and every comparison of the run becomes statistical (`REFUTED`). Until then the verdict
waits (`PENDING`). One object is shared by all the comparisons of a run (`RunStats`).

The same check measures the paths' agreement on the same observations (tui_eval/stats/agreement.py). Within the
tolerance the paths are the SAME POLICY, and their episodes part because the dynamics amplify rounding: then the
seed proves nothing (`REFUTED`, `same_policy`), and the comparison is statistical. Beyond it, the paths differ
(`PROVEN`) whatever the env does, with the step and both actions as proof. `floor` is the first path against itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .agreement import Agreement, NoiseFloor

NOT_NEEDED = "none"  # no differing seed yet
PENDING = "pending"
PROVEN = "proven"
REFUTED = "refuted"


@dataclass
class ExactProof:
    state: str = NOT_NEEDED
    seed: int | None = None
    block: int = 0
    line: str = ""  # what the replay showed, in words
    agreement: Agreement | None = None  # the paths' actions on the same observations of `seed`
    floor: NoiseFloor | None = None  # the first path against itself
    repeats: bool | None = None  # each path alone gave its own record again on `seed`
    #: why no agreement was measured (a path that cannot be fed observations), in words
    agreement_note: str = ""

    @property
    def refuted(self) -> bool:
        return self.state == REFUTED

    @property
    def same_policy(self) -> bool | None:
        """True: the actions agree within the tolerance; False: beyond it; None: not measured (yet)."""
        return None if self.agreement is None else self.agreement.within

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "seed": self.seed, "block": self.block, "line": self.line,
                "agreement": None if self.agreement is None else self.agreement.to_json(),
                "floor": None if self.floor is None else self.floor.to_json(), "repeats": self.repeats,
                "agreement_note": self.agreement_note}

    @classmethod
    def from_json(cls, data: Any) -> ExactProof | None:
        """None for a log written before proofs existed (its exact verdicts stand as they were)."""
        if not isinstance(data, dict):
            return None
        return cls(str(data.get("state", NOT_NEEDED)), data.get("seed"), int(data.get("block") or 0),
                   str(data.get("line", "")), Agreement.from_json(data.get("agreement")),
                   NoiseFloor.from_json(data.get("floor")), data.get("repeats"), str(data.get("agreement_note", "")))


@dataclass
class CheckRequest:
    """What the engine asks of its check (tui_eval/isolation/check.py): paths `a` and `b` (explore off) on `seed` of
    `block`, their results in the run (`recorded`: path -> (return, valid, success)), seeds of `a` for the noise floor
    (seed, block, return in the run, or None: the check plays that seed twice), the action tolerance (None: from
    the policies' type)."""

    a: str
    b: str
    seed: int
    block: int
    recorded: dict[str, tuple[float, bool, bool | None]]
    floor: list[tuple[int, int, float | None]] = field(default_factory=list)  # None: not recorded, play it twice
    tolerance: float | None = None
