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
    from tui_eval.config.spec import RunSpec
    from tui_eval.kinds import load_kind

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


class _NormalizingPolicy(torch.nn.Module):
    """A deployment wrapper written by hand: its own normalize step, then the actor's layers."""

    def __init__(self, mean: torch.Tensor, std: torch.Tensor, eps: float, layers: torch.nn.Module):
        super().__init__()
        self.register_buffer("mean", mean.clone())
        self.register_buffer("std", std.clone())
        self.eps = eps
        self.layers = layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers((x - self.mean) / (self.std + self.eps))


def hand_made_export(checkpoint: Path, form: str) -> None:
    """Exports not written by rsl_rl's exporter classes, next to `checkpoint`: `sequential` (the actor's MLP
    scripted alone: the normalizer forgotten), `wrapper` (a module of its own that normalizes first: right),
    `onnx` (the MLP alone as an ONNX graph whose input is `observations` and output `mu`, any batch), `onnx-batch-1`
    (the same with its batch fixed at 1)."""
    import copy

    from tui_eval.config.spec import RunSpec
    from tui_eval.kinds import load_kind

    kind: Any = load_kind(RunSpec(checkpoint=str(checkpoint), num_envs=1))
    path: Any = kind.build_path("runner", False)
    try:
        actor = path.policy
        layers = torch.nn.Sequential(*copy.deepcopy(list(actor.mlp))).eval()
        norm = actor.obs_normalizer
        mean, std, eps = norm._mean.reshape(-1), norm._std.reshape(-1), float(norm.eps)
    finally:
        path.close()
    folder = checkpoint.parent / "exported"
    folder.mkdir(exist_ok=True)
    if form == "sequential":
        torch.jit.script(layers).save(str(folder / "policy.pt"))
    elif form == "wrapper":
        torch.jit.script(_NormalizingPolicy(mean, std, eps, layers)).save(str(folder / "policy.pt"))
    else:
        x = torch.zeros(1, int(mean.numel()))
        batch = {} if form == "onnx-batch-1" else {"observations": {0: "batch"}, "mu": {0: "batch"}}
        torch.onnx.export(layers, (x,), str(folder / "policy.onnx"), input_names=["observations"],
                          output_names=["mu"], dynamic_axes=batch, dynamo=False)
