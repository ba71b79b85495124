"""Faulty deployments of the rsl_rl demo policy, as users ship them: a copy of the run whose
`exported/policy.pt` was exported by rsl_rl's own `as_jit()` and then changed in one way."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


def faulty_export(run: Path, out: Path, change: Callable[[Any], None]) -> Path:
    """A copy of the rsl_rl run `run` (its model_*.pt and params/) with `change` applied to the TorchScript
    export; returns the copied checkpoint."""
    shutil.copytree(run, out)
    checkpoint = next(out.glob("model_*.pt"))
    (out / "exported" / "policy.pt").unlink()
    return export_next_to(checkpoint, change)


def export_next_to(checkpoint: Path, change: Callable[[Any], None] = lambda export: None, **spec: Any) -> Path:
    """rsl_rl's own `as_jit()` export of the checkpoint's actor, changed by `change`, saved as
    `exported/policy.pt` next to it (as Isaac Lab's play script writes it); returns the checkpoint."""
    from tui_eval.kinds import load_kind
    from tui_eval.spec import RunSpec

    kind: Any = load_kind(RunSpec(checkpoint=str(checkpoint), num_envs=1, **spec))
    path: Any = kind.build_path("runner", False)
    try:
        export = path.policy.as_jit()
    finally:
        path.close()
    change(export)
    (checkpoint.parent / "exported").mkdir(exist_ok=True)
    torch.jit.script(export.to("cpu")).save(str(checkpoint.parent / "exported" / "policy.pt"))
    return checkpoint


def without_normalizer(export: Any) -> None:
    """The export lost the observation normalizer (the deployed policy sees raw observations)."""
    export.obs_normalizer = torch.nn.Identity()


def other_statistics(export: Any) -> None:
    """The export's normalizer holds other running statistics (e.g. of another iteration)."""
    with torch.no_grad():
        export.obs_normalizer._mean += 0.3
        export.obs_normalizer._std *= 1.5
