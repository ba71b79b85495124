"""A deployment contract: what an exported policy says the robot must do around it, checked against the env.

A robot policy leaves the simulator as a file plus a contract (which joints in which order, their PD gains and
default pose, the action scale, the observation terms in order with their scale, clip and history). The deploy
code on the robot is written from the contract, not from the training env; a wrong contract makes a policy that was
perfect in `play` fall over. A kind that reads one (`CheckpointKind.deploy_contract`) compares it item by item with
the env its run builds and gives a `Contract`: each item with both values, `ok`, and a note. Rounding is a finding
of its own kind: an item whose values agree only to the export's printed precision is ok, with the note saying how
much it rounds ("0.373 vs 0.37275, 0.07 %"). The run keeps the contract in its log (`contract` of `--json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: contract items that change what the robot does with an action (a mismatch there is a finding that can act)
ACTING = ("joint order", "joint stiffness", "joint damping", "default joint positions", "action scale",
          "action offset", "action clip", "observation terms", "observation scale", "observation clip",
          "observation history", "observation size", "action size", "normalizer")


@dataclass
class ContractItem:
    name: str
    export: Any  # what the export says
    env: Any  # what the env the run builds does
    ok: bool
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "export": self.export, "env": self.env, "ok": self.ok, "note": self.note}


@dataclass
class Contract:
    """`source`: where it was read (the export's file and what in it); `items` in the order a deployer checks them."""

    source: str
    items: list[ContractItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be read, in one line each
    #: what to do about a broken item, in the terms of the library that wrote the export (`{item}`: the item's
    #: name); empty: the doctor's own words
    fix: str = ""

    @property
    def broken(self) -> list[ContractItem]:
        return [item for item in self.items if not item.ok]

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "items": [i.to_json() for i in self.items], "notes": list(self.notes),
                "fix": self.fix}


def _plain(values: Sequence[Any]) -> list[Any]:
    return [float(v) if isinstance(v, (int, float, np.floating)) else v for v in values]


def compare_numbers(name: str, export: Sequence[float] | None, env: Sequence[float] | None, decimals: int | None = None,
                    labels: Sequence[str] | None = None) -> ContractItem:
    """Per entry: equal, or equal to the export's printed precision (`decimals`: a rounding, said), else a mismatch
    naming the first entry that differs (by `labels`, e.g. joint names) with both values."""
    if export is None or env is None:
        missing = "the export" if export is None else "the env"
        return ContractItem(name, export, env, export is None, f"{missing} does not say")
    x, y = np.asarray(export, dtype=float).reshape(-1), np.asarray(env, dtype=float).reshape(-1)
    if x.shape != y.shape:
        return ContractItem(name, _plain(x.tolist()), _plain(y.tolist()), False,
                            f"{x.size} entries in the export, {y.size} in the env")
    exact = np.isclose(x, y, rtol=1e-6, atol=1e-9, equal_nan=True)
    if exact.all():
        return ContractItem(name, _plain(x.tolist()), _plain(y.tolist()), True)
    step = 0.5 * 10.0 ** -decimals if decimals is not None else 0.0
    rounded = np.abs(x - y) <= step * (1 + 1e-6)
    if rounded.all():
        i = int(np.argmax(np.abs(x - y)))
        share = abs(x[i] - y[i]) / max(abs(y[i]), 1e-12)
        return ContractItem(name, _plain(x.tolist()), _plain(y.tolist()), True,
                            f"rounded to {decimals} decimals ({x[i]:g} vs {y[i]:.6g}, {100 * share:.2g} %)")
    i = int(np.flatnonzero(~rounded)[0])
    where = labels[i] if labels is not None and i < len(labels) else f"entry {i}"
    return ContractItem(name, _plain(x.tolist()), _plain(y.tolist()), False,
                        f"{where}: {x[i]:g} in the export, {y[i]:.6g} in the env")


def compare_names(name: str, export: Sequence[str] | None, env: Sequence[str] | None) -> ContractItem:
    """The same names in the same order; a mismatch says the first position that differs, or what is missing."""
    if export is None or env is None:
        missing = "the export" if export is None else "the env"
        return ContractItem(name, export, env, export is None, f"{missing} does not say")
    ex, en = list(export), list(env)
    if ex == en:
        return ContractItem(name, ex, en, True)
    if sorted(ex) == sorted(en):
        i = next(i for i, (p, q) in enumerate(zip(ex, en)) if p != q)
        return ContractItem(name, ex, en, False, f"another order: position {i} is {ex[i]} in the export, {en[i]} in "
                            "the env")
    extra, absent = sorted(set(ex) - set(en)), sorted(set(en) - set(ex))
    parts = ([f"not in the env: {', '.join(extra)}"] if extra else []) + (
        [f"not in the export: {', '.join(absent)}"] if absent else [])
    return ContractItem(name, ex, en, False, "; ".join(parts) or f"{len(ex)} names in the export, {len(en)} in the env")
