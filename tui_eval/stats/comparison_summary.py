"""What a comparison of two paths says at one moment: frozen numbers, no prose.

`Comparison.summary()` returns a `ComparisonSummary`; views and reports read its fields and word them
(`tui_eval.views.format`); `to_json()` is the `comparison` of the `--json` summary and of a run's saved
snapshot, and `from_json()` reads it back (an attached viewer gets the owner's snapshot as JSON).
Interval keys keep their public names (`diff_cs95`, ...) though their level follows `alpha`, a parameter.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

Interval = tuple[float, float]


@dataclass(frozen=True, slots=True)
class SeedResult:
    """One path's result on one seed, as the comparison saw it."""

    ret: float
    valid: bool
    success: bool | None

    def to_json(self) -> dict[str, Any]:
        return {"return": self.ret, "valid": self.valid, "success": self.success}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SeedResult:
        return cls(data["return"], data["valid"], data["success"])


@dataclass(frozen=True, slots=True)
class FirstDifference:
    """The first paired seed (or repeated record) whose results differ."""

    block: int
    seed: int
    a: SeedResult
    b: SeedResult

    def to_json(self) -> dict[str, Any]:
        return {"block": self.block, "seed": self.seed, "a": self.a.to_json(), "b": self.b.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FirstDifference:
        return cls(data["block"], data["seed"], SeedResult.from_json(data["a"]), SeedResult.from_json(data["b"]))


@dataclass(frozen=True, slots=True)
class ReturnDifference:
    """Mean return of a minus b: paired by seed, or unpaired (Welch-style) until enough pairs exist."""

    method: str | None = None  # "paired", "welch" or None (not enough data)
    mean: float | None = None
    ci: Interval | None = None  # fixed-n, at 1 - alpha
    cs: Interval | None = None  # anytime-valid, at 1 - alpha_each
    cs_method: str | None = None


def _interval(iv: Any) -> Interval | None:
    return None if iv is None else (float(iv[0]), float(iv[1]))


def _listed(iv: Interval | None) -> list[float] | None:
    return None if iv is None else [iv[0], iv[1]]


@dataclass(frozen=True, slots=True)
class ComparisonSummary:
    """A comparison of paths `a` and `b` at one moment. `verdict`: differ / equivalent / undecided."""

    a: str
    b: str
    verdict: str
    exact: bool  # both deterministic: decided seed by seed
    paired: int  # paired seeds with both episodes valid
    diff_mean: float | None
    diff_cs95: Interval | None
    diff_ci95: Interval | None
    method: str | None
    cs_method: str
    margin: float | None
    margin_source: str
    alpha: float
    alpha_each: float  # each of the two metrics (returns, success) gets half of alpha
    identical_pairs: int
    differing: int
    could_differ_upper: float | None
    could_differ_max: float | None  # exact mode only
    duplicates: int
    matched: int
    unmatched_a: int
    unmatched_b: int
    valid_a: int
    valid_b: int
    success_diff: float | None = None
    success_diff_cs95: Interval | None = None
    success_margin: float | None = None  # set when the success metric takes part in the verdict
    first_difference: FirstDifference | None = None
    explore: tuple[bool | None, bool | None] | None = None  # the pairing of explore settings, when known
    held: int | None = None  # records waiting for their block's pairing
    proof: str | None = None  # exact mode: the first differing seed's replay (stats/exact_proof.py), None: none kept
    exact_reason: str | None = None  # why the comparison is (not) exact, when it is worth saying
    repeated: int = 0  # records of a or b that repeat another seed's episode (same start, return, length)
    #: both paths' actions on the same observations within the tolerance (tui_eval/stats/agreement.py); None: not
    #: measured (a path samples, no seed differed yet, or a path cannot be fed observations)
    same_policy: bool | None = None
    agreement: dict[str, Any] | None = None  # `Agreement.to_json()`
    noise_floor: dict[str, Any] | None = None  # `NoiseFloor.to_json()`: the first path against itself
    #: the first differ / equivalent stands (stats/sticky.py): at how many paired seeds it was decided, and the
    #: return-difference interval that decided it (None: exact mode, or not decided on the returns' interval)
    decided_at: int | None = None
    decided_cs95: Interval | None = None
    contradicted: str | None = None  # why a decided verdict was withdrawn or replaced (probability <= alpha)

    @property
    def per_seed(self) -> str | None:
        """Both paths deterministic: "identical" while every paired seed gave the same episode on both, "differing"
        once one did not; None for sampling paths or before a pair (the statistical verdict is all there is)."""
        if not self.exact:
            return None
        if self.differing:
            return "differing"
        return "identical" if self.identical_pairs > 0 else None

    def with_pairing(self, explore: tuple | None, held: int | None = None) -> ComparisonSummary:
        return dataclasses.replace(self, explore=None if explore is None else tuple(explore), held=held)

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for key in ("diff_cs95", "diff_ci95", "success_diff_cs95", "decided_cs95"):
            data[key] = _listed(data[key])
        data["first_difference"] = None if self.first_difference is None else self.first_difference.to_json()
        data["explore"] = None if self.explore is None else list(self.explore)
        data["per_seed"] = self.per_seed
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ComparisonSummary:
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        for key in ("diff_cs95", "diff_ci95", "success_diff_cs95", "decided_cs95"):
            values[key] = _interval(values.get(key))
        first = values.get("first_difference")
        values["first_difference"] = None if first is None else FirstDifference.from_json(first)
        explore = values.get("explore")
        values["explore"] = None if explore is None else tuple(explore)
        return cls(**values)
