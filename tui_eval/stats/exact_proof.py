"""Is a differing seed proof that two paths differ? Only once each path, replayed alone on that seed, gives
its own record again.

With explore off on both paths, one seed whose episodes differ would decide "differ" at once. But an env
whose episode is not a function of its seed (it ignores the seed, draws from a generator shared with other
sub-envs, or a simulator that does not repeat itself bit for bit on a GPU) gives such a seed with identical
paths. So the first differing seed is replayed on each path in a fresh process, alone: if each gives the return,
validity and success it recorded, the difference lies in the paths (`PROVEN`); if not, the env does not repeat
itself from its seed and every comparison of the run becomes statistical (`REFUTED`). Until then the verdict
waits (`PENDING`). One object is shared by all the comparisons of a run (`RunStats`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

    @property
    def refuted(self) -> bool:
        return self.state == REFUTED

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "seed": self.seed, "block": self.block, "line": self.line}

    @classmethod
    def from_json(cls, data: Any) -> ExactProof | None:
        """None for a log written before proofs existed (its exact verdicts stand as they were)."""
        if not isinstance(data, dict):
            return None
        return cls(str(data.get("state", NOT_NEEDED)), data.get("seed"), int(data.get("block") or 0),
                   str(data.get("line", "")))
