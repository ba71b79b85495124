"""`tui-eval diagnose` on a multi-agent checkpoint: the static diff, the replay and the probes that apply.

- Batch: the paired episodes' returns per module; the seed replayed is the first whose return differs for
  any module (or `--seed`).
- Static diff: what each path uses, read from its live objects as for single-agent paths (explore, env and
  env_config, pipeline pieces, connector state, every module's weights against the checkpoint), ranked by
  the same rules (tui_eval/doctor/findings.py).
- Replay (each path's own, a MultiTrace): the actions each path sends, per agent, step by step, on that seed.
- Probe "agent-to-module mapping": a `--path` loop that parts from `connectors` is tried against every other
  mapping of its agents to the checkpoint's modules; the one that makes `connectors` send the loop's actions
  at every step is named, with that proof.
- Probe "state carried over": a `--path` loop that parts from the other path is built afresh (its factory
  called again) and replayed; when it then sends the other path's actions at every step, it carried a state
  (e.g. its modules' recurrent state) over from the batch's earlier episodes.
The single-agent probes replay one module's observations and are skipped, with a note saying so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tui_eval.doctor.findings import UNEXPLAINED, Finding, diagnose_pair
from tui_eval.doctor.replay import Divergence
from tui_eval.doctor.static_diff import compare, env_facts, weight_diff
from tui_eval.paths.base import NO_LIBRARY
from tui_eval.paths.custom import CustomPath
from tui_eval.paths.rerun import AgentMapping, MultiTrace, first_action_divergence

SKIPPED = ("single-agent probes (observation normalizer, observation order, float precision, train mode, "
           "unsquash, state reset every step) are skipped for multi-agent checkpoints: they replay one module's "
           "observations; the agent-to-module mapping and state-carried-over probes run instead")
MAPPING_SCORE = 150  # a proven probe ranks above every rule read from settings (at most 95 + 50)


def module_batch(records: list) -> dict[str, dict[int, dict[str, float]]]:
    """path -> seed -> module -> return, from the batch's records."""
    out: dict[str, dict[int, dict[str, float]]] = {}
    for r in records:
        out.setdefault(r.path, {})[r.seed] = {m: ret for m, ret, _ in r.modules}
    return out


def pick_seed(batch: dict[str, dict[int, dict[str, float]]], names: list[str]) -> int | None:
    """The first paired seed on which any module's return differs between the first path and another."""
    first = batch.get(names[0], {})
    for seed in sorted(first):
        if any(seed in batch.get(p, {}) and batch[p][seed] != first[seed] for p in names[1:]):
            return seed
    return min(first, default=None)


def path_facts(path: Any, kind: Any, references: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    """Plain facts of one multi-agent path (keys as static_diff's FACT_ORDER; absent: unknown), from what it
    offers (`live_parts`), or for a `--path` loop what is found inside its object."""
    owner = getattr(path, "vs_kind", None) or kind
    parts = path.live_parts()
    evaluate = parts is not None and parts.label == "evaluate"
    loop = isinstance(path, CustomPath)
    library = path.library if loop else getattr(parts, "library", NO_LIBRARY)
    found = library.find(path.target) if loop else {}
    e2m = found.get("env_to_module") if loop else getattr(parts, "env_to_module", None)
    m2e = found.get("module_to_env") if loop else getattr(parts, "module_to_env", None)
    f: dict[str, Any] = {"explore": bool(parts.explore) if evaluate and parts is not None else path.explore}
    f.update(env_facts(None, owner.eval_env if evaluate else owner.env))
    f["env_to_module pieces"] = None if e2m is None else [type(c).__name__ for c in e2m.connectors]
    f["module_to_env pieces"] = None if m2e is None else [type(c).__name__ for c in m2e.connectors]
    if e2m is not None or m2e is not None:
        f["connector state"] = {side: s for side, s in (("env_to_module", library.pipeline_state(e2m)),
                                                        ("module_to_env", library.pipeline_state(m2e))) if s}
    modules = library.modules_by_id(path.target if loop else getattr(parts, "module", None))
    if modules:
        weights = references(kind)  # the run's checkpoint, as for single-agent paths: a `--vs` baseline's differ
        diffs = {f"{mid}/{k}": v for mid, sub in modules.items()
                 for k, v in (weight_diff(sub, weights.get(mid)) or {}).items()}
        f["weights"] = {k: v for k, v in diffs.items() if v > 0} or "same as checkpoint"
    return {k: v for k, v in f.items() if v is not None}


def _mapping_finding(a: str, b: str, built: dict[str, Any], traces: dict[str, MultiTrace], seed: int,
                     module_ids: list[str], notes: list[str]) -> Finding | None:
    """Probe: the custom path of the pair mapped its agents to other modules than the checkpoint does."""
    loop = next((n for n in (a, b) if isinstance(built[n], CustomPath)), None)
    connectors = next((n for n in (a, b) if isinstance(built[n], AgentMapping)), None)
    if loop is None or connectors is None:
        return None
    if built[loop].explore or built[connectors].explore:
        notes.append(f"mapping probe ({loop}): needs explore off on both paths (sampled actions differ anyway)")
        return None
    mapping = built[connectors].mapping_for(traces[loop], seed, module_ids)
    if mapping is None:
        notes.append(f"mapping probe ({loop}): no other mapping of its agents to {', '.join(module_ids)} makes "
                     f"`{connectors}` act as it does")
        return None
    own = built[connectors].own_mapping(list(mapping))
    wrong = ", ".join(f"agent {agent} -> {m} (checkpoint: {own[agent]})" for agent, m in mapping.items()
                      if m != own[agent])
    step = first_action_divergence(traces[connectors], traces[loop])
    parted = "" if step is None else f"; with the checkpoint's mapping they part at step {step[0]}"
    return Finding(
        f"path `{loop}` maps agents to other modules than the checkpoint's policy_mapping_fn: {wrong}",
        f"proof: with the mapping {', '.join(f'{agent} -> {m}' for agent, m in mapping.items())}, `{connectors}` "
        f"sends `{loop}`'s actions at every one of its {len(traces[loop].actions)} steps of seed {seed}{parted}",
        f"in `{loop}`, pick each agent's module with the checkpoint's policy_mapping_fn (config.policy_mapping_fn"
        "(agent_id, episode)), not a mapping of your own", [a, b], "action_for_env", seed,
        None if step is None else step[0], MAPPING_SCORE, "mapping")


def _state_finding(a: str, b: str, built: dict[str, Any], traces: dict[str, MultiTrace], seed: int) -> Finding | None:
    """Probe: the custom path of the pair, built afresh, sends the other's actions at every step of the seed."""
    loop = next((n for n in (a, b) if isinstance(built[n], CustomPath) and built[n].remake is not None), None)
    if loop is None or built[a].explore or built[b].explore:
        return None
    other, path = b if loop == a else a, built[loop]
    stale, path.target = path.target, path.remake(path.explore)
    try:
        fresh = path.replay(seed)
    finally:
        fresh_target, path.target = path.target, stale
        if callable(getattr(fresh_target, "close", None)):
            fresh_target.close()
    if first_action_divergence(fresh, traces[other]) is not None:
        return None
    step = first_action_divergence(traces[loop], traces[other])
    parted = "" if step is None else f"; as it ran after the batch's episodes, they part at step {step[0]}"
    return Finding(
        f"path `{loop}` carries a state over from one episode into the next (e.g. its modules' recurrent state "
        "not reset at the episode's start)",
        f"proof: built afresh (its factory called again), `{loop}` sends `{other}`'s actions at every one of its "
        f"{len(fresh.actions)} steps of seed {seed}{parted}",
        f"in `{loop}`, start every agent's state from its module's get_initial_state() at each episode's start "
        "(in reset() for an act(obs) policy)", [a, b], "action_for_env", seed, None if step is None else step[0],
        MAPPING_SCORE - 1, "recurrent")


def diagnose_multi_agent(built: dict[str, Any], kind: Any, records: list, seed: int | None,
                         progress: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """The doctor on built multi-agent paths (kept open), given the batch's records and an optional seed: the
    fields of a Diagnosis (tui_eval.doctor.diagnosis, which builds it)."""
    started = time.perf_counter()
    names, notes = list(built), [SKIPPED]
    batch = module_batch(records)
    chosen = seed if seed is not None else pick_seed(batch, names)
    progress("reading what each path uses")
    weights: dict[int, dict[str, Any]] = {}

    def references(owner: Any) -> dict[str, Any]:  # each checkpoint's modules, read once
        if id(owner) not in weights:
            weights[id(owner)] = {m: owner.module_weights(m) for m in owner.module_ids}
        return weights[id(owner)]

    per_path = {n: path_facts(p, kind, references) for n, p in built.items()}
    same, differ = compare(per_path)
    saved = kind.saved_connector_states()
    findings: list[Finding] = []
    replay_json: dict[str, Any] = {"seed": chosen, "paths": {}, "pairs": []}
    if chosen is not None:
        progress(f"replaying seed {chosen}")
        traces = {n: _replayed(p, chosen) for n, p in built.items()}
        replay_json["paths"] = {n: {"modules": t.modules, "length": len(t.actions), "note": t.note}
                                for n, t in traces.items()}
        a = names[0]
        for b in names[1:]:
            findings += _pair(a, b, built, kind, traces, batch, per_path, saved, chosen, notes, replay_json)
    findings.sort(key=lambda f: -f.score)
    team = {p: {s: sum(m.values()) for s, m in seeds.items()} for p, seeds in batch.items()}
    replay_json["facts"] = json.loads(json.dumps(per_path, default=str))
    replay_json["modules"] = {p: {str(s): m for s, m in seeds.items()} for p, seeds in batch.items()}
    return {"findings": findings, "same": same, "differ": differ, "replay": replay_json, "paths": names,
            "seed": chosen, "batch": team, "notes": notes, "wall_s": time.perf_counter() - started}


def _replayed(path: Any, seed: int) -> MultiTrace:
    trace = path.replay(seed)
    if isinstance(trace, MultiTrace):
        return trace
    return MultiTrace(path.name, note="not replayed (its library's own runner steps it): its episodes' returns "
                      "are compared")


def _pair(a: str, b: str, built, kind, traces, batch, per_path, saved, seed, notes, replay_json) -> list:
    """Findings for paths a and b on `seed`: the rules on their facts, and the mapping probe."""
    both = traces[a].replayed and traces[b].replayed
    parted = first_action_divergence(traces[a], traces[b]) if both else None
    replay_json["pairs"].append({"paths": [a, b], "step": None if parted is None else parted[0],
                                 "values": None if parted is None else parted[1]})
    returns_differ = any(batch[a][s] != batch[b][s] for s in batch.get(a, {}) if s in batch.get(b, {}))
    if parted is None and not returns_differ and both:
        return []
    if not (returns_differ or parted):
        return []
    div = (Divergence(parted[0], "action_for_env", parted[1], "action") if parted is not None
           else Divergence(None, None, {}, "unknown"))
    labels = {n: "custom" if isinstance(built[n], CustomPath) else n for n in (a, b)}
    _, pair_differ = compare({a: per_path[a], b: per_path[b]})  # what differs between these two
    found = diagnose_pair(a, b, per_path, pair_differ, div, seed, labels, saved, coarse=True)
    probed, tried = None, []  # type: Finding | None, list[str]
    if parted:
        probed = _mapping_finding(a, b, built, traces, seed, list(kind.module_ids), tried) or \
            _state_finding(a, b, built, traces, seed)
    if probed is None:
        notes += tried  # what the probes found not to be the cause
    if probed is not None:
        found = [f for f in found if f.cause != UNEXPLAINED] + [probed]
    if seed in batch.get(a, {}) and seed in batch.get(b, {}):
        for f in found:
            f.evidence += f"; module returns on seed {seed}: {a} {batch[a][seed]}, {b} {batch[b][seed]}"
    return found
