"""The `deploy` path's env: the run's env with what the deployment contract states put in place of the env's own.

The deploy code on a robot (or a plain-MuJoCo sim-to-sim script) is written from `<run>.onnx`'s metadata, not from
the training env. So the `deploy` path drives mjlab's `<run>.onnx` in the env the run builds, with:

- the actuators' stiffness and damping from the contract (written per world into the compiled model's
  `actuator_gainprm[:, 0]` and `actuator_biasprm[:, 1:3]`, as mjlab's own `dr.pd_gains` writes absolute gains;
  a motor keeps its bias);
- the default joint positions from the contract (the pose resets start from and joint-position actions are offset by);
- the action scale from the contract;
- the actor's observation terms' scale, clip and history from the contract (set on the env cfg before it is built);
- actions mapped to the joints in the contract's order (a deploy that indexes joints by the exported names).

Where the contract states the env's own values (to their printed precision), the `deploy` path is the `onnx` path.
"""

from __future__ import annotations

import math
from typing import Any

STATED = ("joint_stiffness", "joint_damping", "default_joint_pos", "action_scale", "observation_terms_scale",
          "observation_terms_clip", "observation_terms_history_length")


def apply_to_cfg(cfg: Any, stated: dict[str, Any]) -> None:
    """The contract's observation terms' scale, clip and history on the actor group of the env cfg."""
    terms = cfg.observations["actor"].terms
    names = stated.get("observation_names") or list(terms)
    for i, name in enumerate(names):
        term = terms.get(name)
        if term is None:
            continue
        scale = _at(stated.get("observation_terms_scale"), i)
        if scale is not None:
            term.scale = None if scale == 1.0 else (tuple(scale) if isinstance(scale, list) else scale)
        clip = _at(stated.get("observation_terms_clip"), i)
        if isinstance(clip, list) and len(clip) == 2:
            term.clip = None if clip == [-math.inf, math.inf] else (clip[0], clip[1])
        history = _at(stated.get("observation_terms_history_length"), i)
        if history is not None:
            term.history_length = int(history)


def _at(values: list[Any] | None, i: int) -> Any:
    return values[i] if values is not None and i < len(values) else None


def apply_to_env(env: Any, stated: dict[str, Any]) -> None:
    """The contract's gains, default pose and action scale in the built env (`env`: a ManagerBasedRlEnv)."""
    import torch

    from tui_eval.integrations.rsl_rl.mjlab.contract import robot_of

    robot = robot_of(env)
    if robot is None:
        return
    ctrl = {a.target.split("/")[-1]: a.id for a in robot.spec.actuators}
    ids = [ctrl[j] for j in robot.joint_names if j in ctrl]
    kp, kd = stated.get("joint_stiffness"), stated.get("joint_damping")
    if ids and (kp is not None or kd is not None):
        env.sim.expand_model_fields(("actuator_gainprm", "actuator_biasprm"))
        model, index = env.sim.model, torch.as_tensor(ids, device=env.device)
        if kp is not None and len(kp) == len(ids):
            gains = torch.as_tensor(kp, dtype=model.actuator_gainprm.dtype, device=env.device)
            position = model.actuator_biasprm[:, index, 1] != 0  # a position actuator: its bias holds -kp
            model.actuator_gainprm[:, index, 0] = gains
            model.actuator_biasprm[:, index, 1] = torch.where(position, -gains, model.actuator_biasprm[:, index, 1])
        if kd is not None and len(kd) == len(ids):
            model.actuator_biasprm[:, index, 2] = -torch.as_tensor(kd, dtype=model.actuator_biasprm.dtype,
                                                                   device=env.device)
    pose = stated.get("default_joint_pos")
    if pose is not None and len(pose) == robot.data.default_joint_pos.shape[-1]:
        robot.data.default_joint_pos[:] = torch.as_tensor(pose, dtype=robot.data.default_joint_pos.dtype,
                                                          device=env.device)
    action = _joint_action(env)
    if action is None:
        return
    if getattr(getattr(action, "cfg", None), "use_default_offset", False) and hasattr(action, "_target_ids"):
        action._offset = robot.data.default_joint_pos[:, action._target_ids].clone()
    scale = stated.get("action_scale")
    if scale is not None and len(scale) == action.action_dim:
        action._scale = torch.as_tensor(scale, dtype=torch.float32, device=env.device).repeat(env.num_envs, 1)


def _joint_action(env: Any) -> Any:
    terms = list(env.action_manager.active_terms)
    return env.action_manager.get_term("joint_pos" if "joint_pos" in terms else terms[0]) if terms else None


def actuated_joints(env: Any) -> list[str]:
    """The robot's actuated joints in the env's order (the order its joint action takes them)."""
    from tui_eval.integrations.rsl_rl.mjlab.contract import robot_of

    robot = robot_of(env)
    if robot is None:
        return []
    ctrl = {a.target.split("/")[-1] for a in robot.spec.actuators}
    return [j for j in robot.joint_names if j in ctrl]


def action_order(stated: dict[str, Any], actuated: list[str]) -> list[int] | None:
    """Where each env action comes from in the policy's output, when the contract names the actuated joints in
    another order than the env (None: the same order, or nothing to map)."""
    names = [j for j in (stated.get("joint_names") or []) if j in actuated]
    if sorted(names) != sorted(actuated) or names == actuated:
        return None
    return [names.index(j) for j in actuated]
