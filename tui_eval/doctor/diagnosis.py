"""Put the doctor's parts together on a planned run: batch, facts, replay, findings."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tui_eval.doctor.contract import join_contract
from tui_eval.doctor.findings import Finding, diagnose_pair
from tui_eval.doctor.proofs import Sides, prove, sides_json
from tui_eval.doctor.repeat import ENV_TOPIC, env_finding, first_repeatable_check
from tui_eval.doctor.replay import first_divergence, replay
from tui_eval.doctor.rounding import rounding_finding
from tui_eval.doctor.static_diff import compare, facts, probe
from tui_eval.doctor.swaps import settle
from tui_eval.paths.rerun import Trace
from tui_eval.stats.guards import returns_identical

#: relative tolerance on an episode's return for "the paths gave the same return on this seed"
RETURN_RTOL = 1e-4
BATCH_EPISODES = 5


@dataclass
class Diagnosis:
    findings: list[Finding]
    same: list[dict[str, Any]]
    differ: dict[str, dict[str, Any]]
    replay: dict[str, Any]
    paths: list[str]
    seed: int | None
    batch: dict[str, dict[int, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    #: path -> weights that differ from the checkpoint but that no action depends on (a value head, a critic)
    idle: dict[str, list[str]] = field(default_factory=dict)
    #: fact -> {"values": {path: value}, "proof": ...}: settings that differ, whose swap changed no action
    inert: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"findings": [f.to_json() for f in self.findings], "same": self.same, "differ": self.differ,
                "replay": self.replay, "paths": self.paths, "seed": self.seed,
                "batch": {p: {str(s): r for s, r in v.items()} for p, v in self.batch.items()},
                "notes": self.notes, "wall_s": round(self.wall_s, 2),
                "differs_does_not_act": {"weights": self.idle, "settings": self.inert}}

    def text(self) -> str:
        lines = [f"diagnosis of paths {', '.join(self.paths)}" + (f" on seed {self.seed}" if self.seed is not None
                                                                  else "")]
        if not self.findings:
            lines.append("no findings: the paths do not diverge" + (
                f" (same returns on seeds {', '.join(map(str, sorted(next(iter(self.batch.values()), {}))))})"
                if self.batch else ""))
        for i, f in enumerate(self.findings, 1):
            lines += [f"{i}. {f.cause}", f"   evidence: {f.evidence}", f"   fix: {f.fix}"]
        if self.differ and self.findings:
            lines.append("differing facts: " + ", ".join(self.differ))
        elif self.differ:  # the paths did not diverge: these differences changed no action on the seeds run
            lines.append("differs, changed no action on the seeds run: " + ", ".join(self.differ))
        if self.same:
            lines.append("same on every path: " + ", ".join(s["fact"] for s in self.same))
        if self.idle:
            lines.append("differs, does not act (no action depends on these weights: a value head, a critic): "
                         + "; ".join(f"{n}: {', '.join(w)}" for n, w in self.idle.items()))
        for fact, entry in self.inert.items():
            shown = {n: json.dumps(v, default=str) for n, v in entry["values"].items()}
            values = "; ".join(f"{n}: {v}" for n, v in shown.items()) if max(map(len, shown.values())) <= 40 else \
                "values in --json"
            lines.append(f"differs, does not act: {fact} ({values}): {entry['proof']}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _differs(a: float, b: float) -> bool:
    return abs(a - b) > RETURN_RTOL * max(1.0, abs(a), abs(b))


def pick_seed(batch: dict[str, dict[int, float]], paths: list[str]) -> int | None:
    """The first paired seed whose returns differ between the first path and any other."""
    first = batch.get(paths[0], {})
    for seed in sorted(first):
        if any(seed in batch.get(p, {}) and _differs(first[seed], batch[p][seed]) for p in paths[1:]):
            return seed
    return None


def run_batch(engine, timeout: float = 300) -> dict[str, dict[int, float]]:
    engine.start()
    if not engine.wait(timeout):
        engine.stop()
    out: dict[str, dict[int, float]] = {}
    for r in engine.log.records():
        out.setdefault(r.path, {})[r.seed] = r.ret
    return out


def diagnose_paths(built: dict[str, Any], kind, batch: dict[str, dict[int, float]], seed: int | None,
                   progress: Callable[[str], None] = lambda s: None) -> Diagnosis:
    """The doctor on built paths (kept open), given the batch's returns and an optional chosen seed."""
    started = time.perf_counter()
    names = list(built)
    notes: list[str] = []
    chosen = seed if seed is not None else pick_seed(batch, names)
    if chosen is None:
        chosen = min(next(iter(batch.values()), {}) or [None], key=lambda s: (s is None, s))
    ref = None
    try:
        ref = kind.reference_weights()
    except Exception as exc:  # weights are then not compared
        notes.append(f"could not read the checkpoint's module weights: {exc}")
    progress("reading what each path uses")
    probes = {n: probe(p, kind) for n, p in built.items()}
    for pr in probes.values():
        notes += [f"{pr.name}: {n}" for n in pr.notes]
    per_path = {n: facts(pr, ref) for n, pr in probes.items()}
    same, differ = compare(per_path)
    replay_json: dict[str, Any] = {"seed": chosen, "paths": {}}
    findings: list[Finding] = []
    inert: dict[str, dict[str, Any]] = {}
    if chosen is not None:
        progress(f"replaying seed {chosen}")
        sides = Sides(probes, replay_all(probes, chosen, notes, replay_json))
        unrepeated = first_repeatable_check(probes, sides.traces, chosen)
        proofs, acting = settle(sides, differ, chosen)
        inert = {fact: {"values": differ.pop(fact), "proof": proof} for fact, proof in proofs.items()}
        findings = _pair_findings(sides, batch, per_path, differ, kind, chosen, notes, replay_json,
                                  env_repeats=unrepeated is None)
        _add_counterfactuals(findings, acting)
        if unrepeated is not None:
            env_first(findings, names, unrepeated.proof())
        replay_json["probes"] = sides_json(sides)
    findings.sort(key=lambda f: -f.score)
    per_path_json = {n: {k: v for k, v in f.items() if not k.startswith("_")} for n, f in per_path.items()}
    replay_json["facts"] = compare_json(per_path_json)
    replay_json["checkpoint connector state"] = kind.saved_connector_states()
    idle = {n: sorted(f["_weights_idle"]) for n, f in per_path.items() if f.get("_weights_idle")}
    return Diagnosis(findings, same, differ, replay_json, names, chosen, batch, notes,
                     time.perf_counter() - started, idle, inert)


def _pair_findings(sides: Sides, batch: dict[str, dict[int, float]], per_path: dict[str, dict[str, Any]],
                   differ: dict[str, dict[str, Any]], kind, chosen: int, notes: list[str],
                   replay_json: dict[str, Any], env_repeats: bool = True) -> list[Finding]:
    """The findings of the first path against each other one that diverged from it (or whose returns differ); with
    `env_repeats` (one path replayed twice gave one episode), a same-policy pair's divergence is amplified rounding."""
    traces, names = sides.traces, list(sides.traces)
    replay_json["pairs"] = []
    findings: list[Finding] = []
    a = names[0]
    for b in names[1:]:
        div = first_divergence(traces[a], traces[b])
        replay_json["pairs"].append({"paths": [a, b], "step": div.step, "stage": div.stage, "kind": div.differs_in,
                                     "values": div.values, "stage_match": div.stage_match})
        pair_differs = any(_differs(batch[a][s], batch[b][s]) for s in batch.get(a, {}) if s in batch.get(b, {}))
        if env_repeats and div.differs_in == "none" and not returns_identical(traces[a].ret, traces[b].ret):
            # the actions stay within the tolerance and the returns still part: rounding, when the policies agree
            findings += _amplified_rounding(sides, a, b, div, chosen, notes) or []
            continue
        if div.differs_in in ("none", "unknown") and not pair_differs:
            continue
        coarse = not (traces[a].stages.get("action") and traces[b].stages.get("action"))
        found = diagnose_pair(a, b, per_path, differ, div, chosen,
                              {n: pr.label for n, pr in sides.probes.items()}, kind.saved_connector_states(), coarse)
        found = prove(found, sides, a, b, div, chosen, notes, kind)
        if env_repeats and div.differs_in == "action" and all(f.topic == "unexplained" for f in found):
            found = _amplified_rounding(sides, a, b, div, chosen, notes) or found
        if div.differs_in == "unknown" and chosen in batch.get(a, {}) and chosen in batch.get(b, {}):
            for f in found:
                f.evidence += (f"; returns on seed {chosen}: {a} {batch[a][chosen]:.6g}, {b} "
                               f"{batch[b][chosen]:.6g} (no step-by-step replay for "
                               f"{' and '.join(t.path for t in (traces[a], traces[b]) if not t.stages)})")
        findings += found
    return findings


def _amplified_rounding(sides: Sides, a: str, b: str, div, seed: int, notes: list[str]) -> list[Finding] | None:
    """The same policy on the same observations: the divergence is amplified rounding (tui_eval/doctor/rounding.py)."""
    try:
        built = {n: sides[n] for n in (a, b)}
        found = rounding_finding(a, b, sides.traces, built, {n: sides.probes[n].path for n in (a, b)}, div, seed)
    except Exception as exc:  # a policy that cannot be fed observations explains nothing
        notes.append(f"could not feed {a} and {b} each other's observations: {type(exc).__name__}: {exc}")
        return None
    return None if found is None else [found]


#: the finding's topic each swappable fact belongs to (tui_eval/doctor/findings.py)
_TOPIC = {"normalize_actions": "actions", "clip_actions": "actions", "connector state": "connector state",
          "weights": "weights"}


def _add_counterfactuals(findings: list[Finding], acting: dict[str, str]) -> None:
    """A setting's finding gains what putting the other path's value in did to the actions."""
    for fact, text in acting.items():
        for f in findings:
            if f.topic == _TOPIC[fact] and (f.topic != "actions" or f"{fact}:" in f.evidence):
                f.evidence += f"; {text}"
                break


def replay_all(probes: dict[str, Any], seed: int, notes: list[str], replay_json: dict[str, Any]) -> dict[str, Trace]:
    """Every path replayed on `seed` (a failed replay is noted, with an empty trace); summaries into replay_json."""
    traces: dict[str, Trace] = {}
    for n, pr in probes.items():
        try:
            traces[n] = replay(pr, seed)
        except Exception as exc:
            notes.append(f"replay of {n} failed: {type(exc).__name__}: {exc}")
            traces[n] = Trace(n, note=f"replay failed: {exc}")
        t = traces[n]
        replay_json["paths"][n] = {"return": t.ret, "length": t.length, "end": t.end, "note": t.note,
                                   "stages": [s for s, v in t.stages.items() if v]}
    return traces


def compare_json(per_path: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return json.loads(json.dumps(per_path, default=str))


def diagnose_multi_agent_paths(built: dict[str, Any], kind, records: list, seed: int | None,
                               progress: Callable[[str], None] = lambda s: None) -> Diagnosis:
    """The doctor on built paths of a multi-agent checkpoint (tui_eval/doctor/multi_agent.py), given the batch's
    records (each with its per-module returns)."""
    from tui_eval.doctor.multi_agent import diagnose_multi_agent

    return Diagnosis(**diagnose_multi_agent(built, kind, records, seed, progress))


def diagnose_plan(plan, seed: int | None = None, progress: Callable[[str], None] = lambda s: None,
                  batch_timeout: float = 300) -> Diagnosis:
    """Build the plan's paths, run its (small) paired batch unless `seed` is given, diagnose, close."""
    from tui_eval.session import start_engine

    progress("loading paths")
    engine = start_engine(plan)
    try:
        batch: dict[str, dict[int, float]] = {}
        if seed is None:
            progress(f"running {plan.spec.episodes} paired episodes per path")
            batch = run_batch(engine, batch_timeout)
        if getattr(plan.kind, "multi_agent", False):  # per-module returns, multi-agent replays and probes
            return diagnose_multi_agent_paths(dict(engine.paths), plan.kind, engine.log.records(), seed, progress)
        diagnosis = diagnose_paths(dict(engine.paths), plan.kind, batch, seed, progress)
        join_contract(diagnosis.findings, engine.log.meta().get("contract"), list(plan.paths))
        return with_unrepeatable_env(diagnosis, plan)
    finally:
        engine.close()


def with_unrepeatable_env(diagnosis: Diagnosis, plan) -> Diagnosis:
    """An env that is not a function of its seed is a cause of its own: the same path gives other episodes on
    the same seed, so paired seeds differ whatever the paths do (tui_eval/envs/seeding.py found it before the
    run; the doctor's twice-replay may have found it too)."""
    if not plan.repeatable_seeds:
        env_first(diagnosis.findings, list(plan.paths), f"env seeding: {plan.facts.get('env seeding', '')}")
    return diagnosis


def env_first(findings: list[Finding], names: list[str], evidence: str) -> None:
    """The env finding first in `findings` (made, or joined by `evidence`); the replay's divergence in the env's
    own observations is what the env explains: its proof, not an unexplained finding."""
    found = next((f for f in findings if f.topic == ENV_TOPIC), None)
    if found is None:
        found = env_finding(names, evidence)
        findings.insert(0, found)
    else:
        found.evidence = f"{evidence}; {found.evidence}"
    for f in [f for f in findings if f.topic == "unexplained" and f.stage in ("obs", "env")]:
        findings.remove(f)
        found.evidence += (f"; proof: replayed on seed {f.seed}, the paths got other observations from the env at "
                           f"step {f.step}" + (", before either had acted" if f.step == 0 else
                                               f", after the same {f.step} action(s) on both"))
