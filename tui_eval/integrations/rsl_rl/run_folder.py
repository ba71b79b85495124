"""Run folders of the robot frameworks that train rsl_rl policies: mjlab's and Isaac Lab's.

Both write `logs/rsl_rl/<experiment>/<run>/` with `model_<iteration>.pt`, `params/env.yaml` and
`params/agent.yaml`. mjlab dumps its cfg objects with `!!python/...` tags naming its modules (`mjlab.`); Isaac
Lab's `dump_yaml` writes them as strings (`class_type: isaaclab.assets.articulation.articulation:Articulation`,
`func: isaaclab.envs.mdp.observations:base_lin_vel`), tagged only where a value was pickled. Either names the
framework's modules, which tells the two apart without importing either. Neither stores the task id.
mjlab's velocity runners also write `<run>.onnx`, the policy they deploy (batch 1, with metadata).
"""

from __future__ import annotations

import re
from pathlib import Path

MJLAB = "mjlab"
ISAAC_LAB = "Isaac Lab"
ENV_PARAMS = Path("params") / "env.yaml"
AGENT_PARAMS = Path("params") / "agent.yaml"
_CHECKPOINT = re.compile(r"model_(\d+)\.pt")
#: how far into env.yaml to look for the framework's tags (a Go1 env.yaml is ~60 kB; tags start at once)
_SCAN_BYTES = 1 << 20


def run_folder_of(path: Path) -> Path | None:
    """The run folder `path` is or holds its checkpoint in (the one with params/env.yaml), else None."""
    candidates = [path] if path.is_dir() else [path.parent, path.parent.parent]
    return next((folder for folder in candidates if (folder / ENV_PARAMS).is_file()), None)


def framework_of(folder: Path) -> str | None:
    """`MJLAB`, `ISAAC_LAB`, or None: which framework's modules the run's env.yaml names."""
    try:
        with (folder / ENV_PARAMS).open("rb") as fh:
            text = fh.read(_SCAN_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    if re.search(r"!!python/\S+:mjlab\.", text):
        return MJLAB
    if re.search(r"!!python/\S+:isaaclab(_tasks|_rl|_assets)?\.", text) or re.search(
            r"^\s*(class_type|func): isaaclab(_tasks|_rl|_assets)?\.\S+:", text, re.MULTILINE):
        return ISAAC_LAB
    return None


def checkpoints(folder: Path) -> list[Path]:
    """The run's `model_<iteration>.pt` files, oldest iteration first."""
    found = [(int(m.group(1)), p) for p in folder.glob("model_*.pt") if (m := _CHECKPOINT.fullmatch(p.name))]
    return [p for _, p in sorted(found)]


def deployed_onnx(folder: Path) -> Path | None:
    """mjlab's export of the run's policy, `<run>.onnx` (its velocity and tracking runners write one at each save)."""
    onnx = folder / f"{folder.name}.onnx"
    return onnx if onnx.is_file() else None
