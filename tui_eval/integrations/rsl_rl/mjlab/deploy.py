"""The `deploy` path's env: the run's env with what the deployment contract states put in place of the env's own.

The deploy code on a robot (or a plain-MuJoCo sim-to-sim script) is written from `<run>.onnx`'s metadata, not from
the training env. So the `deploy` path drives mjlab's `<run>.onnx` in the env the run builds, with:

- the actuators' stiffness and damping from the contract (written per world into the compiled model's
  `actuator_gainprm[:, 0]` and `actuator_biasprm[:, 1:3]`, as mjlab's own `dr.pd_gains` writes absolute gains;
  a motor keeps its bias);
- the default joint positions from the contract (the pose resets start from and joint-position actions are offset by);
- the action scale from the contract;
- the actor's observation terms' scale, clip and history from the contract (set on the env cfg before it is built);
- actions mapped to the joints in the contract's order (a deploy that indexes joints by the exported names);
- the actor's observations built in that order too: a term that reads every joint of the robot (mjlab's
  `joint_pos_rel`, `joint_vel_rel`) lists them in the contract's joint order, `last_action` in the policy's output
  order, as a deploy that fills its observation vector by the exported names does. A term of one named joint
  (the cartpole's `cart_pos`) or of bodies or commands has no joint order to follow and is left as it is.

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
    kp = fitting(stated, "joint_stiffness", len(ids), "actuated joints")
    kd = fitting(stated, "joint_damping", len(ids), "actuated joints")
    if ids and (kp is not None or kd is not None):
        env.sim.expand_model_fields(("actuator_gainprm", "actuator_biasprm"))
        model, index = env.sim.model, torch.as_tensor(ids, device=env.device)
        if kp is not None:
            gains = torch.as_tensor(kp, dtype=model.actuator_gainprm.dtype, device=env.device)
            position = model.actuator_biasprm[:, index, 1] != 0  # a position actuator: its bias holds -kp
            model.actuator_gainprm[:, index, 0] = gains
            model.actuator_biasprm[:, index, 1] = torch.where(position, -gains, model.actuator_biasprm[:, index, 1])
        if kd is not None:
            model.actuator_biasprm[:, index, 2] = -torch.as_tensor(kd, dtype=model.actuator_biasprm.dtype,
                                                                   device=env.device)
    pose = fitting(stated, "default_joint_pos", robot.data.default_joint_pos.shape[-1], "joints")
    if pose is not None:
        robot.data.default_joint_pos[:] = torch.as_tensor(pose, dtype=robot.data.default_joint_pos.dtype,
                                                          device=env.device)
    action = _joint_action(env)
    if action is None:
        return
    if getattr(getattr(action, "cfg", None), "use_default_offset", False) and hasattr(action, "_target_ids"):
        action._offset = robot.data.default_joint_pos[:, action._target_ids].clone()
    scale = fitting(stated, "action_scale", action.action_dim, "actions")
    if scale is not None:
        action._scale = torch.as_tensor(scale, dtype=torch.float32, device=env.device).repeat(env.num_envs, 1)


def fitting(stated: dict[str, Any], field: str, size: int, what: str) -> list[Any] | None:
    """The contract's `field`, when it has one value per entry of the env; a list of another length cannot say
    which value is whose, so the deploy path stops with one line rather than play the env's own values."""
    from tui_eval.errors import BadInput

    values = stated.get(field)
    if values is not None and len(values) != size:
        raise BadInput(f"the deploy path drives the export by its metadata, whose {field} has {len(values)} values "
                       f"for the env's {size} {what}; run the other paths (--paths runner,onnx) or export again")
    return values


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


def observation_order(stated: dict[str, Any], env: Any) -> list[int] | None:
    """Where each entry of the actor observation a deploy builds from the contract's joint order comes from in the
    env's (None: nothing moves). Each term's entries move per history step."""
    from tui_eval.integrations.rsl_rl.mjlab.contract import robot_of

    robot, names = robot_of(env), list(stated.get("joint_names") or [])
    joints = list(robot.joint_names) if robot is not None else []
    if sorted(names) != sorted(joints) or names == joints:
        return None
    by_joint = [joints.index(n) for n in names]  # deploy entry k: the env's entry of joint names[k]
    to_env = action_order(stated, actuated_joints(env))  # env action k is the policy's output to_env[k]
    by_action = None if to_env is None else [to_env.index(k) for k in range(len(to_env))]
    robot_name = next((n for n in env.scene.entities if env.scene[n] is robot), None)
    manager, order, start = env.observation_manager, [], 0
    for i, name in enumerate(manager.active_terms["actor"]):
        cfg = manager.get_term_cfg("actor", name)
        size = int(math.prod(manager.group_obs_term_dim["actor"][i]))
        steps = max(int(cfg.history_length or 0), 1)
        moved = _term_order(cfg, robot_name, len(joints), size // steps, by_joint, by_action)
        for step in range(steps):
            base = start + step * (size // steps)
            order += [base + k for k in (moved or range(size // steps))]
        start += size
    return order if order != list(range(start)) else None


def _term_order(cfg: Any, robot_name: str | None, joints: int, width: int, by_joint: list[int],
                by_action: list[int] | None) -> list[int] | None:
    """A term's entries in the deploy's order: every joint of the robot in the entity's order, or the last action."""
    if getattr(cfg.func, "__name__", "") == "last_action":
        return by_action if by_action is not None and len(by_action) == width else None
    import inspect

    asset = (cfg.params or {}).get("asset_cfg")
    if asset is None:  # the function's own default (mjlab's: the entity "robot", every joint)
        default = inspect.signature(cfg.func).parameters.get("asset_cfg")
        asset = None if default is None else default.default
    ids = getattr(asset, "joint_ids", None)
    every = ids == slice(None) or (not isinstance(ids, slice) and list(ids or []) == list(range(joints)))
    if asset is None or getattr(asset, "name", None) != robot_name or not every or width != joints:
        return None
    return by_joint
