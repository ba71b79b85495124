"""Isaac Lab's deployment contract: the run's `params/env.yaml` and its IO descriptors, checked item by item, and
the exported policy's sizes against them.

Isaac Lab's exported policy (`exported/policy.pt` / `policy.onnx`, written by its `play.py`) carries no metadata.
A deployer writes the robot's code from two files instead: the run's `params/env.yaml` (the env cfg as
`dump_yaml` writes it: callables and classes as `module:name` strings, tuples tagged `!!python/tuple`) and, where
the run was trained with `--export_io_descriptors`, the IO descriptors (`IO_descriptors.yaml` in the run folder,
as `ManagerBasedRLEnv.export_IO_descriptors` writes it with `yaml.safe_dump`; `<task>_IO_descriptors.yaml` from
Isaac Lab's export script). The IO descriptors are what the env resolved at run time (joint names in the action
term's order, the articulation's default pose and gains, each observation term's shape), so they are "the
export" here; the env.yaml, resolved over the IO descriptors' joint names as Isaac Lab resolves its regexes
(`re.fullmatch`, the articulation's order unless `preserve_order`), is "the env". Items: joint order, stiffness
and damping (the actuators' cfg values, which Isaac Lab keeps as the articulation's default gains), default joint
positions (`init_state.joint_pos`), action scale, offset and clip, the policy group's observation terms in order
with their scale, clip and history, and the observation and action sizes against the export's graph.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from tui_eval.envs.contract import Contract, ContractItem, compare_names, compare_numbers
from tui_eval.integrations.rsl_rl.export_contract import export_contract

#: where Isaac Lab's train script (run folder), the env's own default (`io_descriptors/`) and its export script
#: (`<task>_IO_descriptors.yaml`) put the IO descriptors
IO_FILES = ("IO_descriptors.yaml", "io_descriptors/IO_descriptors.yaml")
POLICY_GROUP = "policy"


class ContractUnreadable(ValueError):
    """A contract file that cannot be read as Isaac Lab writes it (one line: which file, what is wrong)."""


#: the doctor's fix for a broken item: no deploy path here, the user's deploy code reads the IO descriptors
FIX = ("export the IO descriptors again from the env the policy trained in (train or play with "
       "--export_io_descriptors), or write the deploy code's {item} from the run's params/env.yaml")

def io_descriptors_of(folder: Path) -> Path | None:
    found = [folder / name for name in IO_FILES] + sorted(folder.glob("*_IO_descriptors.yaml")) + sorted(
        (folder / "exported").glob("*IO_descriptors.yaml"))
    return next((p for p in found if p.is_file()), None)


def read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    from tui_eval.integrations.rsl_rl.cfg import safe_yaml_loader

    try:
        data = yaml.load(path.read_text(), Loader=safe_yaml_loader())
    except Exception as exc:  # OSError or one of yaml's several error classes
        raise ContractUnreadable(f"{path.name} cannot be read as YAML ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise ContractUnreadable(f"{path.name} holds a {type(data).__name__}, not a mapping")
    return data


def per_joint(value: Any, joints: list[str], missing: float | None = None) -> list[Any] | None:
    """A cfg value for each joint: a number for all, or `{regex: value}` (the first fully matching regex, as
    Isaac Lab's `resolve_matching_names_values`); None: the cfg leaves it to the asset (USD)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return [value] * len(joints)
    out = []
    for joint in joints:
        out.append(next((v for pattern, v in value.items() if re.fullmatch(str(pattern), joint)), missing))
    return out


def selected_joints(patterns: list[str], articulation: list[str], preserve_order: bool) -> list[str]:
    """The joints `patterns` select, in the articulation's order (or the patterns' order with `preserve_order`)."""
    if preserve_order:
        return [j for p in patterns for j in articulation if re.fullmatch(p, j)]
    return [j for j in articulation if any(re.fullmatch(p, j) for p in patterns)]


def _joint_action(env: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    actions = env.get("actions") or {}
    found = [(k, v) for k, v in actions.items() if isinstance(v, dict) and "joint_names" in v]
    return found[0] if found else None


def _gains(robot: dict[str, Any], joints: list[str], field: str) -> list[Any] | None:
    """Each joint's `field` (stiffness, damping) from the actuator group whose `joint_names_expr` selects it."""
    values: list[Any] = [None] * len(joints)
    for group in (robot.get("actuators") or {}).values():
        if not isinstance(group, dict):
            continue
        exprs = [str(e) for e in group.get("joint_names_expr") or []]
        resolved = per_joint(group.get(field), joints)
        for i, joint in enumerate(joints):
            if resolved is not None and any(re.fullmatch(e, joint) for e in exprs):
                values[i] = resolved[i]
    return None if all(v is None for v in values) else values


def _clip_pair(clip: Any) -> list[float]:
    return [-math.inf, math.inf] if clip is None else [float(v) for v in clip]


def observation_terms(env: dict[str, Any]) -> list[dict[str, Any]]:
    """The policy group's terms in order: name (the term's function, as the IO descriptors name it), scale, clip,
    history (the group's history_length replaces each term's, as Isaac Lab's observation manager does)."""
    group = (env.get("observations") or {}).get(POLICY_GROUP) or {}
    history = group.get("history_length")
    terms = []
    for key, term in group.items():
        if not isinstance(term, dict) or "func" not in term:
            continue
        terms.append({"key": key, "name": str(term["func"]).rpartition(":")[2],
                      "scale": 1.0 if term.get("scale") is None else term["scale"],
                      "clip": _clip_pair(term.get("clip")),
                      "history_length": int(history if history is not None else term.get("history_length") or 0)})
    return terms


def env_side(env: dict[str, Any], articulation: list[str] | None) -> dict[str, Any]:
    """What params/env.yaml says, per joint where the articulation's joint names are known."""
    action = _joint_action(env)
    side: dict[str, Any] = {"observation terms": observation_terms(env)}
    if action is None:
        return side
    _, term = action
    robot = ((env.get("scene") or {}).get(term.get("asset_name") or "robot")) or {}
    patterns = [str(p) for p in term.get("joint_names") or []]
    side["joint patterns"] = patterns
    if articulation is None:
        return side
    joints = selected_joints(patterns, articulation, bool(term.get("preserve_order")))
    pose = per_joint(((robot.get("init_state") or {}).get("joint_pos")), joints, 0.0)
    side.update({"joint order": joints, "joint stiffness": _gains(robot, joints, "stiffness"),
                 "joint damping": _gains(robot, joints, "damping"), "default joint positions": pose,
                 "action scale": per_joint(term.get("scale", 1.0), joints)})
    side["action offset"] = pose if term.get("use_default_offset") else per_joint(term.get("offset", 0.0), joints)
    clip = term.get("clip")
    side["action clip"] = None if clip is None else [_clip_pair(c) for c in per_joint(clip, joints) or []]
    return side


def io_side(io: dict[str, Any]) -> dict[str, Any]:
    """What the IO descriptors say, per joint in the action term's order."""
    actions = [a for a in io.get("actions") or [] if isinstance(a, dict)]
    action = next((a for a in actions if "joint_names" in a), actions[0] if actions else {})
    terms = ((io.get("observations") or {}).get(POLICY_GROUP)) or []
    side: dict[str, Any] = {"observation terms": [_io_term(t) for t in terms if isinstance(t, dict)],
                            "action size": _size(action.get("shape"))}
    articulations = io.get("articulations") or {}
    robot: dict[str, Any] = articulations.get("robot") or next(iter(articulations.values()), {})
    side["articulation"] = list(robot.get("joint_names") or []) or None
    _check_lengths(robot, action, side["articulation"])
    joints = [str(j) for j in action.get("joint_names") or []]
    if not joints:
        return side
    side["joint order"] = joints
    where = [side["articulation"].index(j) if side["articulation"] and j in side["articulation"] else None
             for j in joints]
    for field, name in (("default_joint_stiffness", "joint stiffness"), ("default_joint_damping", "joint damping"),
                        ("default_joint_pos", "default joint positions")):
        values = robot.get(field)
        side[name] = None if values is None or None in where else [values[i] for i in where]
    scale, offset = action.get("scale"), action.get("offset")
    side["action scale"] = None if scale is None else scale if isinstance(scale, list) else [scale] * len(joints)
    side["action offset"] = None if offset is None else offset if isinstance(offset, list) else [offset] * len(
        joints)
    clip = action.get("clip")
    side["action clip"] = None if clip is None else [_clip_pair(c) for c in clip]
    return side


def _check_lengths(robot: dict[str, Any], action: dict[str, Any], articulation: list[str] | None) -> None:
    """A per-joint list of another length than its joints cannot say which value is whose: the file is wrong."""
    fields = [(f"articulations' {f}", robot.get(f), articulation, "the articulation") for f in (
        "default_joint_stiffness", "default_joint_damping", "default_joint_pos")]
    fields += [(f"action term's {f}", action.get(f), action.get("joint_names"), "the action term") for f in (
        "scale", "offset", "clip")]
    for name, values, joints, whose in fields:
        if isinstance(values, list) and joints is not None and len(values) != len(joints):
            raise ContractUnreadable(f"the IO descriptors' {name} has {len(values)} values for the {len(joints)} "
                                     f"joints of {whose}: not checked, export the IO descriptors again")


def _size(shape: Any) -> int | None:
    return int(math.prod(shape)) if isinstance(shape, list) and shape else None


def _io_term(term: dict[str, Any]) -> dict[str, Any]:
    overloads = term.get("overloads") or {}
    return {"name": str(term.get("name")), "size": _size(term.get("shape")),
            "scale": 1.0 if overloads.get("scale") is None else overloads["scale"],
            "clip": _clip_pair(overloads.get("clip")), "history_length": int(overloads.get("history_length") or 0)}


def _per_term(name: str, field: str, io_terms: list[dict[str, Any]], env_terms: list[dict[str, Any]]) -> ContractItem:
    """One field of each observation term, the IO descriptors' against the env.yaml's (a scale may be a list)."""
    export, env = [t[field] for t in io_terms], [t[field] for t in env_terms]
    if len(export) != len(env):
        return ContractItem(name, export, env, False, f"{len(export)} terms in the export, {len(env)} in the env")
    for term, x, y in zip(env_terms, export, env):
        xs, ys = (x if isinstance(x, list) else [x]), (y if isinstance(y, list) else [y])
        if len(xs) == 1 and len(ys) > 1:
            xs = xs * len(ys)
        if not compare_numbers(name, xs, ys).ok:
            return ContractItem(name, export, env, False, f"{term['name']}: {x} in the export, {y} in the env")
    return ContractItem(name, export, env, True)


def _numbers(name: str, io: list[Any] | None, env: list[Any] | None, joints: list[str] | None) -> ContractItem:
    """Per joint; a value env.yaml leaves to the robot's USD (a null gain, a joint no regex selects) is not
    checked: only the simulator knows it, and the IO descriptors wrote it down."""
    if io is not None and env is not None and len(io) == len(env) and None in env:
        known = [i for i, v in enumerate(env) if v is not None]
        item = compare_numbers(name, [io[i] for i in known], [env[i] for i in known],
                               labels=[joints[i] for i in known] if joints else None)
        unset = ", ".join(joints[i] for i, v in enumerate(env) if v is None) if joints else "some joints"
        return ContractItem(name, io, env, item.ok, "; ".join(filter(None, [
            item.note, f"params/env.yaml leaves {unset} to the robot's USD: not checked"])))
    if io is not None and env is None:
        return ContractItem(name, io, None, True, "params/env.yaml leaves it to the robot's USD: not checked")
    return compare_numbers(name, io, env, labels=joints)


def check(io: dict[str, Any], env: dict[str, Any], graph: tuple[int | None, int | None]) -> list[ContractItem]:
    """The IO descriptors ("the export") against env.yaml ("the env") item by item, then the graph's sizes."""
    joints = io.get("joint order")
    items = [compare_names("joint order", joints, env.get("joint order"))]
    for name in ("joint stiffness", "joint damping", "default joint positions", "action scale", "action offset"):
        items.append(_numbers(name, io.get(name), env.get(name), joints))
    clip_x, clip_y = io.get("action clip"), env.get("action clip")
    if clip_x is None and clip_y is None:
        items.append(ContractItem("action clip", None, None, True, "neither clips the action"))
    else:
        items.append(compare_numbers("action clip", None if clip_x is None else [v for c in clip_x for v in c],
                                     None if clip_y is None else [v for c in clip_y for v in c],
                                     labels=[j for j in joints or [] for _ in (0, 1)]))
    io_terms, env_terms = io["observation terms"], env["observation terms"]
    items.append(compare_names("observation terms", [t["name"] for t in io_terms], [t["name"] for t in env_terms]))
    for field, name in (("scale", "observation scale"), ("clip", "observation clip"),
                        ("history_length", "observation history")):
        items.append(_per_term(name, field, io_terms, env_terms))
    items += size_items(io, env_terms, graph)
    return items


def size_items(io: dict[str, Any], env_terms: list[dict[str, Any]],
               graph: tuple[int | None, int | None]) -> list[ContractItem]:
    """The export's input size against the policy group's terms (each term's size × its history, the env.yaml's),
    its output size against the action term's."""
    sizes = [t["size"] for t in io["observation terms"]]
    histories = [t["history_length"] for t in env_terms] if len(env_terms) == len(sizes) else [
        t["history_length"] for t in io["observation terms"]]
    wanted = None if None in sizes else sum(s * max(h, 1) for s, h in zip(sizes, histories))
    parts = " + ".join(f"{t['name']} {s}" + (f"×{h}" if h > 1 else "")
                       for t, s, h in zip(io["observation terms"], sizes, histories))
    items = []
    for name, export, env, how in (("observation size", graph[0], wanted, parts),
                                   ("action size", graph[1], io.get("action size"), "the action term's shape")):
        ok = export is None or env is None or export == env
        note = "" if ok else f"the export's graph takes {export}, the policy group gives {env} ({how})" if \
            name == "observation size" else f"the export's graph outputs {export}, the env takes {env} ({how})"
        items.append(ContractItem(name, export, env, ok, note or ("" if export is not None else
                                                                  "the export's layers are not named as rsl_rl's "
                                                                  "MLP: not compared")))
    return items


def isaac_lab_contract(folder: Path, actor: dict[str, Any], exports: list[Path]) -> Contract | None:
    """The run's contract: env.yaml against its IO descriptors, the export's sizes against both, and the export's
    normalizer (export_contract.py). Without IO descriptors, the export's own check and one note saying so."""
    from tui_eval.integrations.rsl_rl.export_contract import export_tensors, mlp_sizes
    from tui_eval.integrations.rsl_rl.run_folder import ENV_PARAMS

    own = export_contract(actor, exports)
    export = next((p for p in exports if p.is_file()), None)
    io_path = io_descriptors_of(folder)
    if io_path is None:
        if own is not None:
            own.notes.append(f"no IO descriptors in {folder.name} (Isaac Lab writes them when trained with "
                             "--export_io_descriptors): params/env.yaml's joints, gains and terms are not checked")
        return own
    source = (f"{io_path.relative_to(folder)} (Isaac Lab's IO descriptors)"
              + (f" and {export.parent.name}/{export.name}" if export else "") + f" against the run's {ENV_PARAMS}")
    try:
        io = io_side(read_yaml(io_path))
        env = env_side(read_yaml(folder / ENV_PARAMS), io.get("articulation"))
        graph = mlp_sizes(export_tensors(export)) if export is not None else (None, None)
    except ContractUnreadable as exc:
        return Contract(source, list(own.items) if own else [], [str(exc)] + (own.notes if own else []))
    except Exception as exc:  # a malformed field of either file (a list where a mapping belongs, ...)
        return Contract(source, list(own.items) if own else [],
                        [f"{io_path.name} or params/env.yaml is not laid out as Isaac Lab writes it "
                         f"({type(exc).__name__}: {str(exc)[:80]})"])
    items = check(io, env, graph)
    normalizer = [i for i in (own.items if own else []) if i.name == "normalizer"]
    return Contract(source, items + normalizer, own.notes if own else [], fix=FIX)
