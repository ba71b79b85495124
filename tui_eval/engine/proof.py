"""The engine's proof of an exact difference: the first differing seed, checked in a fresh process.

Started by the engine when a comparison of two paths with explore off sees its first differing seed
(tui_eval/stats/exact_proof.py says why). Runs in a thread of its own while the run goes on; the engine's
`prove` callable (tui_eval/isolation/check.py) feeds each path's policy the other's observations of that seed,
replays it on each path alone, and a few more seeds of the first path for the noise floor. The result is shared by
every comparison of the run, written to the log and said as a notice; a run that ends meanwhile waits for it.
`engine` is the `tui_eval.engine.core.Engine` that started it (not imported: the engine imports this module).
"""

from __future__ import annotations

import threading
from typing import Any

from tui_eval.errors import first_line
from tui_eval.log.lifecycle import RunMeta
from tui_eval.records import PathNotice
from tui_eval.stats.agreement import Agreement, NoiseFloor
from tui_eval.stats.comparison_summary import SeedResult
from tui_eval.stats.exact_proof import NOT_NEEDED, PENDING, PROVEN, REFUTED, CheckRequest, ExactProof


def first_unproven_difference(engine: Any) -> tuple[str, str, Any] | None:
    """Under the engine's lock: the first differing seed of an exact comparison, when no proof was started yet
    (it is then marked pending)."""
    proof = engine.proof
    if proof is None or proof.state != NOT_NEEDED:
        return None
    for cmp in engine.stats.comparisons.values():
        first = cmp.first_difference
        if cmp.policies_deterministic and first is not None:
            proof.state, proof.seed, proof.block = PENDING, first.seed, first.block
            return cmp.a, cmp.b, first
    return None


def restore_proof(engine: Any) -> None:
    """A resumed run keeps the proof its log holds; one that was under way starts again at the next record."""
    kept = ExactProof.from_json(engine.log.meta().get("exact_proof"))
    if engine.proof is not None and kept is not None and kept.state in (PROVEN, REFUTED):
        engine.proof.state, engine.proof.seed, engine.proof.block, engine.proof.line = (
            kept.state, kept.seed, kept.block, kept.line)


def start_proof(engine: Any, a: str, b: str, first: Any) -> None:
    proof = engine.proof
    assert proof is not None
    proof.line = (f"seed {first.seed} differs: feeding each path's policy the other's observations of it, and "
                  f"replaying it on {a} and on {b} alone, in a fresh process")
    RunMeta(exact_proof=proof.to_json()).write(engine.log)
    engine._publish(PathNotice(a, proof.line))
    threading.Thread(target=_prove, args=(engine, a, b, first), name="exact-proof", daemon=True).start()


FLOOR_SEEDS = 8  # the first path's other seeds offered to the check for its noise floor


def check_request(engine: Any, a: str, b: str, first: Any) -> CheckRequest:
    """The check of `first` (a FirstDifference), with the first path's earliest other valid seeds for the floor."""
    floor: list[tuple[int, int, float | None]] = []
    for record in engine.log.records():
        if len(floor) >= FLOOR_SEEDS:
            break
        if record.path == a and not record.invalid and (record.seed, record.block) != (first.seed, first.block):
            floor.append((record.seed, record.block, record.ret))
    taken = {(seed, block) for seed, block, _ in floor} | {(first.seed, first.block)}
    seed = first.seed
    while len(floor) < FLOOR_SEEDS:  # seeds the run has not recorded yet: the check plays each twice itself
        seed += 1
        if (seed, first.block) not in taken:
            floor.append((seed, first.block, None))
    recorded = {a: (first.a.ret, first.a.valid, first.a.success), b: (first.b.ret, first.b.valid, first.b.success)}
    return CheckRequest(a, b, first.seed, first.block, recorded, floor, engine.action_tolerance)


def _prove(engine: Any, a: str, b: str, first: Any) -> None:
    proof = engine.proof
    assert proof is not None and engine._prove is not None
    if engine.stop_requested:
        engine.proof_settled()
        return  # abandoned: the proof stays pending, the verdict undecided
    try:
        answer = engine._prove(check_request(engine, a, b, first))
        failed = None
    except Exception as exc:  # a check that cannot run proves nothing
        if engine.stop_requested or engine._closed:
            engine.proof_settled()
            return  # ended by the run's stop or close, not by the check
        answer, failed = None, f"the check of seed {first.seed} could not run ({first_line(exc, 160)})"
    with engine._lock:
        settle(proof, a, b, first, answer, failed)
    RunMeta(exact_proof=proof.to_json(), repeatable_seeds=False if proof.repeats is False else None).write(engine.log)
    engine._publish(PathNotice(a, proof.line))
    engine.proof_settled()


def settle(proof: ExactProof, a: str, b: str, first: Any, answer: dict[str, Any] | None, failed: str | None) -> None:
    """The proof's state from the check's answer (tui_eval/isolation/check.py): beyond the tolerance on the same
    observations, PROVEN; within it, the same policy (REFUTED: the comparison is statistical); unmeasured, the
    replays alone decide as before (each path gave its own record again: PROVEN)."""
    seed = f"seed {first.seed}"
    if answer is None:
        proof.state = REFUTED
        proof.line = f"the difference on {seed} is unproven: {failed}; the comparison is statistical"
        return
    replays = answer["replays"]
    parted = [f"{name} gave {_shown(recorded)} in the run and {_again(replays[name]['record'])} alone"
              for name, recorded in ((a, first.a), (b, first.b)) if not replays[name]["same"]]
    proof.repeats = not parted
    found = Agreement.from_json(answer.get("agreement"))
    proof.agreement = found if found is not None and found.steps > 0 else None  # nothing compared claims nothing
    proof.floor = NoiseFloor.from_json(answer.get("floor"))
    proof.agreement_note = "; ".join(answer.get("notes") or [])
    repeat_text = (f"each path alone gave its own return again ({a} {_shown(first.a)}, {b} {_shown(first.b)})"
                   if not parted else f"the env is not repeatable from its seed: {'; '.join(parted)}")
    ag = proof.agreement
    if ag is not None and not ag.within:
        proof.state, proof.line = PROVEN, f"{seed}: {differ_text(ag)}; {repeat_text}: the paths differ"
    elif ag is not None:
        proof.state = REFUTED
        why = why_they_part(answer.get("parting"), bool(parted))
        proof.line = (f"{seed}: the same policy to the tolerance ({same_text(ag)}); the episodes part because "
                      f"{why}; {repeat_text}; the comparison is statistical")
    elif not parted:
        proof.state = PROVEN
        proof.line = f"{seed} replayed on each path alone: {repeat_text}: the paths differ"
    else:
        proof.state, proof.line = REFUTED, f"{repeat_text}; the comparison is statistical"
    if ag is None and proof.agreement_note:
        proof.line += f" (actions on the same observations not compared: {proof.agreement_note})"


def why_they_part(parting: Any, unrepeated: bool) -> str:
    """Why a same-policy pair's episodes part, from where their replays' observations first differ
    (tui_eval/paths/agreement.py: how_they_part)."""
    how, step = (parting or ["unknown", None])[:2]
    if unrepeated:
        return "the env does not repeat itself from its seed"
    if how == "env":
        return (f"their envs differ: after the same actions, the observations differ at step {step} (another env, "
                "or the env driven as a deployment contract states)")
    return "the dynamics amplify rounding"


def same_text(ag: Agreement) -> str:
    return (f"max |Δaction| {ag.max_abs:.2g}, p99 {ag.p99_abs:.2g}, over {ag.steps} steps both ways; tolerance "
            f"{ag.tolerance.atol:g} absolute and relative, {ag.tolerance.source.split(':')[0]}")


def differ_text(ag: Agreement) -> str:
    """The step, observation and both actions where the policies are furthest apart on the same observation."""
    w = ag.worst
    if w is None:
        return f"actions beyond the tolerance (max |Δaction| {ag.max_abs:.3g})"
    other = next(n for n in w.actions if n != w.on) if len(w.actions) > 1 else w.on
    return (f"on {w.on}'s observation at step {w.step} {_short(w.observation)}, {w.on} sends {_short(w.actions[w.on])} "
            f"and {other}'s policy {_short(w.actions[other])} (max |Δaction| {ag.max_abs:.3g} > tolerance "
            f"{ag.tolerance.atol:g}; {ag.mismatches} of {ag.steps} steps beyond it)")


def _short(values: list[Any], shown: int = 6) -> str:
    text = ", ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in values[:shown])
    return f"[{text}{', …' if len(values) > shown else ''}]"


def _shown(result: SeedResult) -> str:
    return f"{result.ret:.8g}" if result.valid else "invalid"


def _again(record: dict[str, Any] | None) -> str:
    if record is None:
        return "no record"
    return f"{record['return']:.8g}" if record["valid"] else "invalid"
