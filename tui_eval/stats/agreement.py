"""Is it the same policy? Two paths' actions on the same observations, to a stated tolerance; and how far a path's
returns move without any difference at all (the noise floor).

Episodes alone cannot answer "is my export the same policy": a legged robot's rollout amplifies a rounding of 1e-7
in one action until two faithful paths' episodes part (an mjlab Go1 runner and its `<run>.onnx` part after ~400
steps). So the paths are judged on the same inputs: path B's policy is fed path A's observations (and A's policy
B's), each policy's recurrent state carried along its own copy, and every action is compared with the action the
other path sent at that step.

`Agreement` holds what the comparison of those actions found; `Tolerance` what counts as the same action:
`|a - b| <= atol + rtol * max(|a|, |b|)` elementwise (numpy's `isclose`, made symmetric). The default follows the
policies' floating-point type: float32 gets 1e-5 absolute and relative (mjlab's own ONNX round-trip test accepts
onnxruntime against PyTorch at atol 1e-5; float32 has ~7 significant digits and a small MLP's forward loses one or
two), float64 1e-9, half precision 1e-2; discrete actions must be equal. `NoiseFloor` is a path against itself: the
same seed replayed on the same path, the per-seed return differences' mean and spread.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: (atol, rtol) per floating-point type of the actions compared; the coarser type of the two paths decides
DTYPE_TOLERANCE: dict[str, tuple[float, float]] = {
    "float16": (1e-2, 1e-2), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-5), "float64": (1e-9, 1e-9),
}
_COARSE_FIRST = ("float16", "bfloat16", "float32", "float64")


@dataclass(frozen=True)
class Tolerance:
    """What counts as the same action: `|a - b| <= atol + rtol * max(|a|, |b|)`; `source` says where it comes from."""

    atol: float
    rtol: float
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"atol": self.atol, "rtol": self.rtol, "source": self.source}

    @classmethod
    def from_json(cls, data: Any) -> Tolerance | None:
        if not isinstance(data, dict):
            return None
        return cls(float(data["atol"]), float(data["rtol"]), str(data.get("source", "")))


def default_tolerance(dtypes: Sequence[str], given: float | None = None) -> Tolerance:
    """`--action-tolerance T` (absolute and relative), else the coarser floating-point type of the paths' actions."""
    if given is not None:
        return Tolerance(float(given), float(given), "--action-tolerance")
    floats = [d for d in dtypes if d in DTYPE_TOLERANCE]
    coarsest = min(floats, key=_COARSE_FIRST.index) if floats else "float32"
    atol, rtol = DTYPE_TOLERANCE[coarsest]
    said = "" if floats else " (assumed: no floating-point action to read the type from)"
    return Tolerance(atol, rtol, f"{coarsest} actions{said}: {atol:g} absolute and relative")


@dataclass(frozen=True)
class Worst:
    """The step where the two paths' actions on the same observation are furthest apart (the proof of a difference
    when beyond the tolerance): whose observations they were, and both actions."""

    seed: int
    step: int
    on: str  # the path whose observation both policies were fed
    observation: list[Any]
    actions: dict[str, list[Any]]  # path -> its action on that observation

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "step": self.step, "on": self.on, "observation": self.observation,
                "actions": self.actions}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Worst:
        return cls(int(data["seed"]), int(data["step"]), str(data["on"]), list(data["observation"]),
                   dict(data["actions"]))


@dataclass(frozen=True)
class Agreement:
    """Two paths' actions on the same observations. `max_abs`, `p99_abs`: the largest and the 99th-percentile
    per-step |Δaction| (largest over the action's components); `max_rel`: the largest |Δ| over the action's scale
    (`scale_source`); `steps`: observations compared (both ways); `within`: every step within `tolerance`;
    `discrete`: actions are indices (then `mismatches` counts steps that send another one)."""

    max_abs: float
    p99_abs: float
    max_rel: float
    steps: int
    tolerance: Tolerance
    within: bool
    seeds: tuple[int, ...] = ()
    discrete: bool = False
    mismatches: int = 0
    worst: Worst | None = None
    scale_source: str = ""
    dtypes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"max_abs": self.max_abs, "p99_abs": self.p99_abs, "max_rel": self.max_rel, "steps": self.steps,
                "tolerance": self.tolerance.to_json(), "within": self.within, "seeds": list(self.seeds),
                "discrete": self.discrete, "mismatches": self.mismatches,
                "worst": None if self.worst is None else self.worst.to_json(), "scale_source": self.scale_source,
                "dtypes": dict(self.dtypes)}

    @classmethod
    def from_json(cls, data: Any) -> Agreement | None:
        if not isinstance(data, dict) or "max_abs" not in data:
            return None
        tolerance = Tolerance.from_json(data.get("tolerance")) or Tolerance(0.0, 0.0, "")
        worst = data.get("worst")
        return cls(float(data["max_abs"]), float(data["p99_abs"]), float(data["max_rel"]), int(data["steps"]),
                   tolerance, bool(data["within"]), tuple(data.get("seeds") or ()), bool(data.get("discrete")),
                   int(data.get("mismatches") or 0), None if worst is None else Worst.from_json(worst),
                   str(data.get("scale_source", "")), dict(data.get("dtypes") or {}))


@dataclass(frozen=True)
class ActionPairs:
    """One direction of the check: the actions path `on` sent on its own observations (`sent`) and those the other
    path's policy gave on the same observations (`given`), step by step, with the observations."""

    seed: int
    on: str
    other: str
    observations: list[Any]
    sent: list[Any]
    given: list[Any]


def action_scale(sent: Sequence[Any], low: Any = None, high: Any = None) -> tuple[np.ndarray, str]:
    """Per component: half the action space's width where it is bounded, else the largest |action| sent (at least
    1e-12): what a relative difference is relative to."""
    if low is not None and high is not None:
        lo, hi = np.asarray(low, dtype=float).reshape(-1), np.asarray(high, dtype=float).reshape(-1)
        if np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo):
            return (hi - lo) / 2.0, "half the action space's width"
    stacked = np.stack([np.asarray(a, dtype=float).reshape(-1) for a in sent]) if sent else np.ones((1, 1))
    return np.maximum(np.max(np.abs(stacked), axis=0), 1e-12), "the largest |action| sent"


def measure(directions: Sequence[ActionPairs], tolerance: Tolerance, scale: np.ndarray | None = None,
            scale_source: str = "", dtypes: dict[str, str] | None = None) -> Agreement:
    """The agreement over every step of every direction (steps whose shapes differ count as beyond tolerance)."""
    per_step: list[float] = []
    max_rel = 0.0
    mismatches = 0
    within = True
    worst: tuple[float, ActionPairs, int] | None = None
    discrete = False
    for d in directions:
        for t, (x, y) in enumerate(zip(d.sent, d.given)):
            a, b = np.asarray(x), np.asarray(y)
            discrete = discrete or a.dtype.kind in "iub"
            gap, ok, rel = _step_gap(a, b, tolerance, scale)
            per_step.append(gap)
            max_rel = max(max_rel, rel)
            if not ok:
                within = False
                mismatches += 1
            if worst is None or gap > worst[0] or (not ok and worst[0] == gap):
                worst = (gap, d, t)
    if not per_step:
        return Agreement(math.nan, math.nan, math.nan, 0, tolerance, False, scale_source=scale_source,
                         dtypes=dict(dtypes or {}))
    gaps = np.asarray(per_step)
    assert worst is not None
    _, d, t = worst
    shown = Worst(d.seed, t, d.on, _plain(d.observations[t]) if t < len(d.observations) else [],
                  {d.on: _plain(d.sent[t]), d.other: _plain(d.given[t])})
    huge = np.finfo(float).max  # an infinite gap (a shape or NaN mismatch) ranks above all, without NaN arithmetic
    p99 = float(np.percentile(np.where(np.isfinite(gaps), gaps, huge), 99, method="higher"))
    return Agreement(float(gaps.max()), math.inf if p99 == huge else p99, float(max_rel), len(per_step), tolerance,
                     within, tuple(sorted({d.seed for d in directions})), discrete, mismatches, shown, scale_source,
                     dict(dtypes or {}))


def _step_gap(a: np.ndarray, b: np.ndarray, tolerance: Tolerance, scale: np.ndarray | None) -> tuple[float, bool,
                                                                                                       float]:
    """(largest |Δ| over the components, within the tolerance, largest |Δ| / scale) of one step."""
    if a.shape != b.shape:
        return math.inf, False, math.inf
    if a.size == 0:
        return 0.0, True, 0.0
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        same = bool(np.array_equal(a, b))
        gap = float(np.max(np.abs(a.astype(float) - b.astype(float))))
        return gap, same, gap
    x, y = a.astype(float).reshape(-1), b.astype(float).reshape(-1)
    diff = np.abs(x - y)
    if not np.all(np.isfinite(diff)):
        return math.inf, False, math.inf
    ok = bool(np.all(diff <= tolerance.atol + tolerance.rtol * np.maximum(np.abs(x), np.abs(y))))
    rel = float(np.max(diff / scale)) if scale is not None and scale.shape == diff.shape else float(np.max(diff))
    return float(diff.max()), ok, rel


def _plain(value: Any) -> list[Any]:
    arr = np.asarray(value)
    if arr.dtype.kind in "fc":
        return [float(f"{v:.9g}") for v in arr.astype(float).reshape(-1)]
    return arr.reshape(-1).tolist()


# ------------------------------------------------------------------------------------------------- the floor
@dataclass(frozen=True)
class NoiseFloor:
    """Path `path` against itself: seeds replayed on it alone, each return minus the run's return on that seed.
    `diff_spread` is their standard deviation (0 for one seed, or when every replay repeated its episode);
    `max_abs` the largest |difference|; `repeated`: replays that gave the run's return exactly."""

    path: str
    seeds: int
    diff_mean: float
    diff_spread: float
    max_abs: float
    repeated: int

    @property
    def zero(self) -> bool:
        return self.seeds > 0 and self.repeated == self.seeds

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "seeds": self.seeds, "diff_mean": self.diff_mean, "diff_spread": self.diff_spread,
                "max_abs": self.max_abs, "repeated": self.repeated}

    @classmethod
    def from_json(cls, data: Any) -> NoiseFloor | None:
        if not isinstance(data, dict) or "path" not in data:
            return None
        return cls(str(data["path"]), int(data["seeds"]), float(data["diff_mean"]), float(data["diff_spread"]),
                   float(data.get("max_abs", 0.0)), int(data.get("repeated", 0)))


def noise_floor(path: str, replayed: Sequence[float], recorded: Sequence[float], same: Sequence[bool]) -> NoiseFloor:
    """The floor from replayed and recorded returns of the same seeds (`same`: the replay gave the run's episode)."""
    d = np.asarray(replayed, dtype=float) - np.asarray(recorded, dtype=float)
    if d.size == 0:
        return NoiseFloor(path, 0, math.nan, math.nan, math.nan, 0)
    spread = float(np.std(d, ddof=1)) if d.size > 1 else 0.0
    return NoiseFloor(path, int(d.size), float(d.mean()), spread, float(np.max(np.abs(d))), int(sum(same)))
