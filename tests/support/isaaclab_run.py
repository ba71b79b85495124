"""An Isaac Lab run folder around the rsl_rl demo policy, for the deployment contract's tests.

Isaac Sim cannot be installed here, so Isaac Lab's `train.py` cannot write the run. This module writes the two
files it would, in Isaac Lab's own dumped formats, for a two-joint robot whose policy group (joint_pos_rel and
joint_vel_rel, 2 + 2) and joint action (2) fit the demo policy's 4 inputs and 2 outputs:

- `params/env.yaml` as `isaaclab.utils.io.dump_yaml` writes an env cfg: `class_to_dict` (classes and functions
  as `module:name` strings) through `yaml.dump(default_flow_style=False, sort_keys=False)`, tuples as
  `!!python/tuple`;
- `IO_descriptors.yaml` as `ManagerBasedRLEnv.export_IO_descriptors` writes it (`yaml.safe_dump` of
  `get_IO_descriptors`: `actions`, `articulations`, `observations`, `scene`; the values read back from float32
  tensors, so 0.4 is written 0.4000000059604645), with the fields of Isaac Lab's
  `isaac_velocity_flat_anymal_d_v0_IO_descriptors.yaml`.

The checkpoint and `exported/policy.pt` are the demo's: a real rsl_rl checkpoint and its real `as_jit()` export.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tests.support.common import ROOT

DEMO = ROOT / "assets" / "rsl_pointgoal"
JOINTS = ["slide_x", "slide_y"]
STIFFNESS = {"slide_x": 40.0, "slide_y": 30.0}
DAMPING = 2.5
DEFAULT_POS = {"slide_x": 0.4, "slide_y": -0.8}
ACTION_SCALE = 0.5


def _f32(value: float) -> float:
    return float(np.float32(value))  # what `.cpu().numpy().tolist()` gives for a float32 tensor


def _term(func: str, history: int = 0) -> dict[str, Any]:
    return {"func": f"isaaclab.envs.mdp.observations:{func}", "params": {}, "modifiers": None, "noise": None,
            "clip": None, "scale": None, "history_length": history, "flatten_history_dim": True}


def env_cfg() -> dict[str, Any]:
    """The env cfg as `class_to_dict` gives it (the parts a deployer reads, and a few around them)."""
    return {
        "viewer": {"eye": (7.5, 7.5, 7.5), "lookat": (0.0, 0.0, 0.0), "origin_type": "world"},
        "sim": {"physics_prim_path": "/physicsScene", "device": "cuda:0", "dt": 0.005, "gravity": (0.0, 0.0, -9.81)},
        "ui_window_class_type": "isaaclab.envs.ui.manager_based_rl_env_window:ManagerBasedRLEnvWindow",
        "seed": 42, "decimation": 4,
        "scene": {"num_envs": 4096, "env_spacing": 2.5, "robot": {
            "class_type": "isaaclab.assets.articulation.articulation:Articulation",
            "prim_path": "/World/envs/env_.*/Robot",
            "spawn": {"func": "isaaclab.sim.spawners.from_files.from_files:spawn_from_usd", "usd_path": "slider.usd"},
            "init_state": {"pos": (0.0, 0.0, 0.1), "rot": (1.0, 0.0, 0.0, 0.0), "lin_vel": (0.0, 0.0, 0.0),
                           "ang_vel": (0.0, 0.0, 0.0), "joint_pos": {".*_x": 0.4, ".*_y": -0.8},
                           "joint_vel": {".*": 0.0}},
            "soft_joint_pos_limit_factor": 0.9,
            "actuators": {"sliders": {
                "class_type": "isaaclab.actuators.actuator_pd:ImplicitActuator", "joint_names_expr": ["slide_.*"],
                "effort_limit": None, "velocity_limit": None, "effort_limit_sim": 400.0, "velocity_limit_sim": None,
                "stiffness": {"slide_x": 40.0, "slide_y": 30.0}, "damping": DAMPING, "armature": None,
                "friction": None}}}},
        "observations": {"policy": {"concatenate_terms": True, "concatenate_dim": -1, "enable_corruption": False,
                                    "history_length": None, "flatten_history_dim": True,
                                    "joint_pos": _term("joint_pos_rel"), "joint_vel": _term("joint_vel_rel")}},
        "actions": {"joint_pos": {"class_type": "isaaclab.envs.mdp.actions.joint_actions:JointPositionAction",
                                  "asset_name": "robot", "debug_vis": False, "clip": None, "joint_names": [".*"],
                                  "scale": ACTION_SCALE, "offset": 0.0, "preserve_order": False,
                                  "use_default_offset": True}},
        "episode_length_s": 10.0,
    }


def _joint_term(func: str, what: str, offsets: list[float]) -> dict[str, Any]:
    return {"dtype": "torch.float32", "extras": {"description": f"The joint {what} of the asset.", "modifiers": None},
            "full_path": f"isaaclab.envs.mdp.observations.{func}", "joint_names": list(JOINTS),
            f"joint_{what[:3]}_offsets": offsets, "mdp_type": "Observation", "name": func,
            "observation_type": "JointState",
            "overloads": {"clip": None, "flatten_history_dim": True, "history_length": 0, "scale": None},
            "shape": [len(JOINTS)]}


def io_descriptors() -> dict[str, Any]:
    """`get_IO_descriptors` of the env above, as its action and observation managers and articulation give it."""
    pose = [_f32(DEFAULT_POS[j]) for j in JOINTS]
    zeros = [0.0] * len(JOINTS)
    return {
        "actions": [{"action_type": "JointAction", "clip": None, "dtype": "torch.float32",
                     "extras": {"description": "Joint action term that applies the processed actions to the "
                                               "articulation's joints as position commands."},
                     "full_path": "isaaclab.envs.mdp.actions.joint_actions.JointPositionAction",
                     "joint_names": list(JOINTS), "mdp_type": "Action", "name": "joint_position_action",
                     "offset": pose, "scale": ACTION_SCALE, "shape": [len(JOINTS)]}],
        "articulations": {"robot": {
            "default_joint_armature": zeros, "default_joint_damping": [_f32(DAMPING)] * len(JOINTS),
            "default_joint_friction": zeros, "default_joint_pos": pose,
            "default_joint_pos_limits": [[_f32(-1.0), _f32(1.0)] for _ in JOINTS],
            "default_joint_stiffness": [_f32(STIFFNESS[j]) for j in JOINTS], "default_joint_vel": zeros,
            "joint_names": list(JOINTS)}},
        "observations": {"policy": [_joint_term("joint_pos_rel", "position", pose),
                                    _joint_term("joint_vel_rel", "velocity", zeros)]},
        "scene": {"decimation": 4, "dt": 0.02, "physics_dt": 0.005},
    }


def write_run(out: Path, env: dict[str, Any] | None = None, io: dict[str, Any] | None = None,
              io_name: str = "IO_descriptors.yaml") -> Path:
    """The run folder `out/logs/rsl_rl/slider/<run>/` (env.yaml, agent.yaml, IO descriptors, checkpoint, export);
    returns its checkpoint."""
    run = out / "logs" / "rsl_rl" / "slider" / "2026-12-01_10-00-00"
    (run / "params").mkdir(parents=True)
    (run / "exported").mkdir()
    with (run / "params" / "env.yaml").open("w") as fh:
        yaml.dump(env if env is not None else env_cfg(), fh, default_flow_style=False, sort_keys=False)
    shutil.copy(DEMO / "params" / "agent.yaml", run / "params" / "agent.yaml")
    if io_name:
        with (run / io_name).open("w") as fh:
            yaml.safe_dump(io if io is not None else io_descriptors(), fh)
    shutil.copy(DEMO / "exported" / "policy.pt", run / "exported" / "policy.pt")
    shutil.copy(DEMO / "model_39.pt", run / "model_39.pt")
    return run / "model_39.pt"


def with_io(out: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """A run whose IO descriptors have `change` applied (a deployer's file that disagrees with the env)."""
    io = io_descriptors()
    change(io)
    return write_run(out, io=io)
