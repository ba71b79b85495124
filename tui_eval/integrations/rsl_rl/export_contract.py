"""What an rsl_rl export without metadata still says: its input and output sizes, and whether the checkpoint's
observation normalizer is inside it.

rsl_rl's own exporters (`export_policy_to_jit` / `_onnx`, and `as_jit()`) bake the normalizer in; hand-written ones
often drop it (Isaac Lab issue 3836), and the deployed policy then sees raw observations. Read from the file the
user deploys next to the checkpoint (`exported/policy.pt`, else `exported/policy.onnx`): a TorchScript module's
state, or an ONNX graph's initializers, holding the checkpoint's `obs_normalizer` mean and standard deviation (to
float32 rounding), other statistics of that shape, or none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tui_eval.envs.contract import Contract, ContractItem


def export_tensors(path: Path) -> dict[str, np.ndarray]:
    """The export's named tensors: a TorchScript module's state, an ONNX graph's initializers."""
    if path.suffix == ".onnx":
        import onnx
        from onnx import numpy_helper

        model = onnx.load(str(path))
        return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    import warnings

    import torch

    with warnings.catch_warnings():  # torch 2.13 deprecates jit.load; deployments still use it
        warnings.simplefilter("ignore")
        module = torch.jit.load(str(path), map_location="cpu")
    return {k: v.detach().cpu().numpy() for k, v in module.state_dict().items()}


def _holds(tensors: dict[str, np.ndarray], wanted: np.ndarray) -> bool:
    flat = wanted.reshape(-1)
    return any(t.size == flat.size and np.allclose(t.reshape(-1), flat, rtol=1e-5, atol=1e-6) for t in tensors.values())


def mlp_sizes(sd: dict[str, Any]) -> tuple[int | None, int | None]:
    weights = sorted((k for k in sd if k.startswith("mlp.") and k.endswith(".weight")),
                     key=lambda k: int(k.split(".")[1]))
    if not weights:
        return None, None
    return int(np.asarray(sd[weights[0]]).shape[1]), int(np.asarray(sd[weights[-1]]).shape[0])


def normalizer_item(actor: dict[str, Any], tensors: dict[str, np.ndarray]) -> ContractItem:
    mean, std = actor.get("obs_normalizer._mean"), actor.get("obs_normalizer._std")
    if mean is None or std is None:
        return ContractItem("normalizer", "none found", "the checkpoint normalizes no observation", True)
    mean, std = np.asarray(mean, dtype=np.float32), np.asarray(std, dtype=np.float32)
    if _holds(tensors, mean) and _holds(tensors, std):
        return ContractItem("normalizer", "the checkpoint's mean and std", "obs_normalizer", True,
                            "the export normalizes observations as the policy was trained to see them")
    same_shape = [k for k, t in tensors.items() if t.size == mean.size and "normalizer" in k]
    if same_shape:
        return ContractItem("normalizer", f"other statistics ({', '.join(same_shape[:2])})", "obs_normalizer", False,
                            "the export normalizes with statistics other than the checkpoint's: export again from "
                            "this checkpoint")
    return ContractItem("normalizer", "none found", "obs_normalizer", False,
                        "the checkpoint normalizes observations and the export holds no such statistics: it lost "
                        "the normalizer (export with rsl_rl's export_policy_to_jit / _onnx, which bake it in)")


def export_contract(actor: dict[str, Any], exports: list[Path]) -> Contract | None:
    """The check of the first export that exists (None: none next to the checkpoint)."""
    path = next((p for p in exports if p.is_file()), None)
    if path is None:
        return None
    source = f"{path.parent.name}/{path.name} (no metadata: read from its weights) against the checkpoint's actor"
    try:
        tensors = export_tensors(path)
    except Exception as exc:  # torch and onnx raise their own error classes for a file they cannot read
        return Contract(source, notes=[f"{path} cannot be read as an export ({type(exc).__name__}); export again"])
    sizes, export_sizes = mlp_sizes(actor), mlp_sizes(tensors)
    items = [ContractItem("observation size", export_sizes[0], sizes[0], export_sizes[0] == sizes[0] or
                          None in (export_sizes[0], sizes[0])),
             ContractItem("action size", export_sizes[1], sizes[1], export_sizes[1] == sizes[1] or
                          None in (export_sizes[1], sizes[1])),
             normalizer_item(actor, tensors)]
    for item in items[:2]:
        if item.export is None:
            item.note = "the export's layers are not named as rsl_rl's MLP: not compared"
    return Contract(source, items)
