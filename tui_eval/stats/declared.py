"""A path's statistics, each declared once: its key, how it is computed, what quantity it is, and how
the headless table and the app show it. `PathStats.summary` computes every declared statistic; the run's
keys that are not pooled across explore settings, `--json`'s path entries, a multi-agent run's per-module
part, the headless table, the app's table and the tests all read `declared()`. A statistic added with
`declare` appears in every one of them.

The "95" in `*ci95` / `*cs95` names the public JSON keys; every interval is at 1 - alpha (0.05 unless given).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: the quantities a statistic is: a count pools across explore settings, the others do not
COUNT, ESTIMATE, FIXED_N, ANYTIME = "count", "estimate", "fixed-n interval", "anytime interval"


@dataclass(frozen=True)
class Cell:
    """How a view shows a statistic: a column `header`, and `show`: "num" (with `digits`), "interval", "percent"
    (a rate, with the interval under key `with_key`), "with" (the value and the interval under `with_key`), or
    "alarm" (a count shown loud when not zero). In the app a column with `drop` set goes first when the terminal
    is narrow (lower first)."""

    header: str
    show: str = "num"
    digits: int = 1
    with_key: str | None = None
    drop: float | None = None


@dataclass(frozen=True)
class Statistic:
    key: str  # in a path's summary and `--json`
    #: (PathStats, its shared numbers for this summary: `Shared`) -> a JSON value, None where undefined
    compute: Callable[[Any, Any], Any]
    quantity: str = ESTIMATE  # COUNT, ESTIMATE, FIXED_N or ANYTIME
    table: Cell | None = None  # the headless table's column
    app: Cell | None = None  # the app's column
    per_module: bool = False  # also in a multi-agent run's per-module part


@dataclass
class Shared:
    """The numbers several statistics of one summary share, computed once per summary."""

    n: int
    var: float
    cs: tuple[tuple[float, float] | None, str]
    iqm: tuple[float | None, list[float] | None]
    success: tuple[float | None, list[float] | None, list[float] | None]
    invalid: tuple[float | None, list[float] | None, list[float] | None]


def pair(iv: Any) -> list[float] | None:
    return None if iv is None else [float(iv[0]), float(iv[1])]


def _t_interval(s: Any, b: Shared) -> list[float] | None:
    from .intervals import t_interval_from_moments

    return pair(t_interval_from_moments(b.n, s.mean, b.var, s.alpha))


_BUILT_IN: tuple[Statistic, ...] = (
    Statistic("episodes", lambda s, b: s.episodes, COUNT, per_module=True),
    Statistic("valid", lambda s, b: b.n, COUNT),
    Statistic("mean", lambda s, b: s.mean if b.n else None, per_module=True,
              table=Cell("mean", digits=2), app=Cell("mean [anytime 95%]", "with", with_key="cs95")),
    Statistic("std", lambda s, b: math.sqrt(max(b.var, 0.0)) if b.n > 1 else None, per_module=True),
    Statistic("min", lambda s, b: s.minimum if b.n else None),
    Statistic("max", lambda s, b: s.maximum if b.n else None),
    Statistic("ci95", _t_interval, FIXED_N, per_module=True, table=Cell("95% CI", "interval", 2)),
    Statistic("cs95", lambda s, b: pair(b.cs[0]), ANYTIME, per_module=True,
              table=Cell("anytime 95%", "interval", 2)),
    Statistic("iqm", lambda s, b: b.iqm[0], per_module=True, table=Cell("IQM", digits=2), app=Cell("IQM", drop=2)),
    Statistic("iqm_ci95", lambda s, b: b.iqm[1], FIXED_N),
    Statistic("success_rate", lambda s, b: b.success[0], table=Cell("success", "percent", with_key="success_ci95"),
              app=Cell("success [anytime 95%]", "percent", with_key="success_cs95")),
    Statistic("success_ci95", lambda s, b: b.success[1], FIXED_N),
    Statistic("success_cs95", lambda s, b: b.success[2], ANYTIME),
    Statistic("invalid", lambda s, b: s.invalid, COUNT, per_module=True, table=Cell("invalid"),
              app=Cell("invalid", "alarm")),
    Statistic("invalid_rate", lambda s, b: b.invalid[0]),
    Statistic("invalid_ci95", lambda s, b: b.invalid[1], FIXED_N),
    Statistic("invalid_cs95", lambda s, b: b.invalid[2], ANYTIME),
    Statistic("mean_length", lambda s, b: s.mean_length, table=Cell("mean len"),
              app=Cell("mean len", drop=1)),
)
_added: list[Statistic] = []


def declared() -> tuple[Statistic, ...]:
    """Every statistic, built-in first, in the order views show them."""
    return _BUILT_IN + tuple(_added)


def declare(statistic: Statistic) -> None:
    """Add a statistic to every view (replacing one of the same key added before)."""
    if any(s.key == statistic.key for s in _BUILT_IN):
        raise ValueError(f"statistic {statistic.key!r} is built in")
    _added[:] = [s for s in _added if s.key != statistic.key] + [statistic]


def withdraw(key: str) -> None:
    """Remove a statistic added with `declare`."""
    _added[:] = [s for s in _added if s.key != key]


def not_pooled() -> tuple[str, ...]:
    """Keys that are statistics of returns or rates: never pooled across explore settings."""
    return tuple(s.key for s in declared() if s.quantity != COUNT)
