"""mjlab's deployment contract: the metadata its exporter attaches to `<run>.onnx`, checked against the env.

mjlab 1.6's `attach_metadata_to_onnx(get_base_metadata(env, run_path))` writes, as text: `run_path, joint_names,
joint_stiffness, joint_damping, default_joint_pos, command_names, observation_names, observation_terms_scale,
observation_terms_clip, observation_terms_history_length, observation_terms_flatten_history_dim, action_scale`;
numbers rounded to 3 decimals, a list per entry joined with ';' (a per-dimension scale, a [min, max] clip). The env
side is read from the env the run builds, as mjlab's own `get_base_metadata` reads it (the actuators' gains from the
compiled model in the joints' order, the entity's default pose, the action term's scale, the actor's observation
terms), from the robot entity (`robot`, else the entity whose joints the actuators drive) and the joint action term
(`joint_pos`, else the first). Whether the observation normalizer is inside the graph is told by running it: the
export's output against the runner's actor with and without its normalizer, on the env's own first observations.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tui_eval.envs.contract import Contract, ContractItem, compare_names, compare_numbers

DECIMALS = 3  # mjlab's list_to_csv_str default
LISTS = ("joint_names", "command_names", "observation_names")
NUMBERS = ("joint_stiffness", "joint_damping", "default_joint_pos", "action_scale")


class ContractUnreadable(ValueError):
    """The export's metadata cannot be read as mjlab writes it (one line: which field, what is wrong)."""


#: the doctor's fix for a broken item, in mjlab's terms
FIX = ("export again so that the contract is written from the training env (mjlab: "
       "attach_metadata_to_onnx(get_base_metadata(env)) on the env the policy trained in), or write the deploy code's "
       "{item} from the env's values; the deploy path shows what the contract costs")

def parse_metadata(meta: dict[str, str]) -> dict[str, Any]:
    """mjlab's text fields as values: names as lists, numbers as floats (a ';'-joined entry as a list of them)."""
    out: dict[str, Any] = {}
    for key, text in meta.items():
        if key in LISTS:
            out[key] = [t for t in text.split(",") if t != ""]
        elif key in NUMBERS or key.startswith("observation_terms_"):
            try:
                out[key] = [_number(entry) for entry in text.split(",")] if text != "" else []
            except ValueError:
                raise ContractUnreadable(f"the export's metadata field {key} is not a list of numbers: "
                                         f"{text[:60]!r}") from None
        else:
            out[key] = text
    _check_lengths(out)
    return out


def _check_lengths(fields: dict[str, Any]) -> None:
    """Lists that must have one value per joint or per observation term: a list of another length cannot say which
    value is whose (the gains are the actuated joints', at most one per joint, stiffness and damping alike)."""
    joints, terms = fields.get("joint_names"), fields.get("observation_names")
    for key in ("joint_stiffness", "joint_damping"):
        values = fields.get(key)
        if values is not None and joints is not None and len(values) > len(joints):
            raise ContractUnreadable(f"the export's metadata field {key} has {len(values)} values for the "
                                     f"{len(joints)} joints of joint_names: export again")
    wanted: list[tuple[str, Any, str]] = [("default_joint_pos", joints, "joints of joint_names")]
    wanted += [("joint_damping", fields.get("joint_stiffness"), "entries of joint_stiffness")]
    wanted += [(k, terms, "terms of observation_names") for k in fields if k.startswith("observation_terms_")]
    for key, reference, what in wanted:
        values = fields.get(key)
        if values is not None and reference is not None and len(values) != len(reference):
            raise ContractUnreadable(f"the export's metadata field {key} has {len(values)} values for the "
                                     f"{len(reference)} {what}: export again")


def _number(entry: str) -> float | list[float]:
    parts = entry.split(";")
    values = [float(p) for p in parts]  # "inf" and "-inf" parse too
    return values[0] if len(values) == 1 else values


def robot_of(env: Any) -> Any:
    scene = env.scene
    names = list(scene.entities) if hasattr(scene, "entities") else []
    if "robot" in names:
        return scene["robot"]
    driven = [scene[n] for n in names if getattr(scene[n], "joint_names", None) and scene[n].spec.actuators]
    return driven[0] if driven else None


def env_side(env: Any) -> dict[str, Any]:
    """What the env the run builds does, in the contract's fields (mjlab's `get_base_metadata`, for any entity)."""
    robot, manager = robot_of(env), env.action_manager
    terms = list(manager.active_terms)
    action = manager.get_term("joint_pos" if "joint_pos" in terms else terms[0]) if terms else None
    side: dict[str, Any] = {"command_names": list(env.command_manager.active_terms),
                            "observation_names": list(env.observation_manager.active_terms["actor"])}
    if robot is not None:
        ctrl = {a.target.split("/")[-1]: a.id for a in robot.spec.actuators}
        ids = [ctrl[j] for j in robot.joint_names if j in ctrl]
        model = env.sim.mj_model
        side["joint_names"] = list(robot.joint_names)
        side["joint_stiffness"] = model.actuator_gainprm[ids, 0].tolist()
        side["joint_damping"] = (-model.actuator_biasprm[ids, 2]).tolist()
        side["default_joint_pos"] = robot.data.default_joint_pos[0].cpu().tolist()
    scale = getattr(action, "_scale", None)
    if action is not None and scale is not None:
        side["action_scale"] = scale[0].cpu().tolist() if hasattr(scale, "cpu") else [float(scale)] * action.action_dim
    for field, read in (("scale", _term_scale), ("clip", _term_clip), ("history_length", _term_int("history_length")),
                        ("flatten_history_dim", _term_int("flatten_history_dim"))):
        side[f"observation_terms_{field}"] = [read(env.observation_manager.get_term_cfg("actor", name))
                                              for name in side["observation_names"]]
    return side


def _term_scale(cfg: Any) -> Any:
    scale = cfg.scale
    if scale is None:
        return 1.0
    return scale.cpu().tolist() if hasattr(scale, "cpu") else scale


def _term_clip(cfg: Any) -> list[float]:
    return [-math.inf, math.inf] if cfg.clip is None else [float(v) for v in cfg.clip]


def _term_int(name: str):
    return lambda cfg: int(getattr(cfg, name) or 0) if not isinstance(getattr(cfg, name), bool) else \
        int(getattr(cfg, name))


def check(export: dict[str, Any], env: dict[str, Any], source: str) -> Contract:
    """The contract item by item, in a deployer's order; a field the export does not carry is said, not failed."""
    joints = env.get("joint_names")
    items = [compare_names("joint order", export.get("joint_names"), joints)]
    labels = export.get("joint_names") or joints
    for field, name in (("joint_stiffness", "joint stiffness"), ("joint_damping", "joint damping"),
                        ("default_joint_pos", "default joint positions"), ("action_scale", "action scale")):
        items.append(compare_numbers(name, export.get(field), env.get(field), DECIMALS, labels))
    items.append(compare_names("observation terms", export.get("observation_names"), env.get("observation_names")))
    terms = export.get("observation_names") or env.get("observation_names")
    for field, name in (("scale", "observation scale"), ("clip", "observation clip"),
                        ("history_length", "observation history"), ("flatten_history_dim", "observation history dim")):
        items.append(_per_term(name, export.get(f"observation_terms_{field}"), env.get(f"observation_terms_{field}"),
                               terms))
    items.append(compare_names("command names", export.get("command_names"), env.get("command_names")))
    return Contract(source, items, fix=FIX)


def _per_term(name: str, export: list[Any] | None, env: list[Any] | None, terms: list[str] | None) -> ContractItem:
    """Per observation term: equal to the printed precision (a scale or clip may itself be a list)."""
    if export is None or env is None:
        return compare_numbers(name, export, env, DECIMALS)
    if len(export) != len(env):
        return ContractItem(name, export, env, False, f"{len(export)} terms in the export, {len(env)} in the env")
    for i, (x, y) in enumerate(zip(export, env)):
        x_list, y_list = (x if isinstance(x, list) else [x]), (y if isinstance(y, list) else [y])
        if len(x_list) == 1 and len(y_list) > 1:  # one number written for a per-dimension scale
            x_list = x_list * len(y_list)
        item = compare_numbers(name, x_list, y_list, DECIMALS)
        if not item.ok:
            label = terms[i] if terms and i < len(terms) else f"term {i}"
            return ContractItem(name, export, env, False, f"{label}: {x} in the export, {y} in the env")
    return ContractItem(name, export, env, True)


def read_contract(onnx_path: Path, metadata: dict[str, str], env: Any) -> Contract:
    """The check of `onnx_path`'s metadata against `env` (a built ManagerBasedRlEnv); unreadable metadata is one
    note and no item."""
    source = f"{onnx_path.name}'s metadata (mjlab's exporter) against the env the run builds"
    if not metadata:
        return Contract(source, notes=[f"{onnx_path.name} carries no metadata: nothing to check the deploy code by"])
    try:
        export = parse_metadata(metadata)
    except ContractUnreadable as exc:
        return Contract(source, notes=[str(exc)])
    return check(export, env_side(env), source)
