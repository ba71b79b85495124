"""The engine's proof of an exact difference: the first differing seed, replayed on each path alone.

Started by the engine when an exact comparison (explore off on both paths) sees its first differing seed
(tui_eval/stats/exact_proof.py says why). Runs in a thread of its own while the run goes on; the engine's
`prove` callable replays one seed of one path in a fresh process (tui_eval/session.py). The result is shared by
every comparison of the run, written to the log and said as a notice; a run that ends meanwhile waits for it.
`engine` is the `tui_eval.engine.core.Engine` that started it (not imported: the engine imports this module).
"""

from __future__ import annotations

import threading
from typing import Any

from tui_eval.config.spec import EpisodeRecord
from tui_eval.errors import first_line
from tui_eval.events import PathNotice
from tui_eval.log.lifecycle import RunMeta
from tui_eval.stats.compare import same_result
from tui_eval.stats.comparison_summary import SeedResult
from tui_eval.stats.exact_proof import NOT_NEEDED, PENDING, PROVEN, REFUTED, ExactProof


def first_unproven_difference(engine: Any) -> tuple[str, str, Any] | None:
    """Under the engine's lock: the first differing seed of an exact comparison, when no proof was started yet
    (it is then marked pending)."""
    proof = engine.proof
    if proof is None or proof.state != NOT_NEEDED:
        return None
    for cmp in engine.stats.comparisons.values():
        first = cmp.first_difference
        if cmp.deterministic and first is not None:
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
    proof.line = f"seed {first.seed} differs: replaying it on {a} and on {b}, each alone in a fresh process"
    RunMeta(exact_proof=proof.to_json()).write(engine.log)
    engine._publish(PathNotice(a, proof.line))
    threading.Thread(target=_prove, args=(engine, a, b, first), name="exact-proof", daemon=True).start()


def _same(record: EpisodeRecord, recorded: SeedResult) -> bool:
    return same_result(record.ret, not record.invalid, record.success, recorded.ret, recorded.valid, recorded.success)


def _shown(result: SeedResult) -> str:
    return f"{result.ret:.6g}" if result.valid else "invalid"


def _prove(engine: Any, a: str, b: str, first: Any) -> None:
    proof = engine.proof
    assert proof is not None and engine._prove is not None
    parted: list[str] = []
    failed: str | None = None
    for name, recorded in ((a, first.a), (b, first.b)):
        if engine.stop_requested:
            engine.proof_settled()
            return  # abandoned: the proof stays pending, the verdict undecided
        try:
            again = engine._prove(name, False, first.seed, first.block)
        except Exception as exc:  # a replay that cannot run proves nothing
            if engine.stop_requested or engine._closed:
                engine.proof_settled()
                return  # ended by the run's stop or close, not by the replay
            failed = f"{name} could not be replayed alone ({first_line(exc, 160)})"
            break
        if again is None:
            failed = f"{name} gave no record when replayed alone"
            break
        if not _same(again, recorded):
            again_text = "invalid" if again.invalid else f"{again.ret:.6g}"
            parted.append(f"{name} gave {_shown(recorded)} in the run and {again_text} alone")
    seed = f"seed {first.seed}"
    with engine._lock:
        if failed is None and not parted:
            proof.state = PROVEN
            proof.line = (f"{seed} replayed on each path alone gave each its own return again ({a} "
                          f"{_shown(first.a)}, {b} {_shown(first.b)}): the paths differ")
        else:
            proof.state = REFUTED
            proof.line = (f"the env is not repeatable from its seed: {'; '.join(parted)}" if parted else
                          f"the difference on {seed} is unproven: {failed}") + "; the comparison is statistical"
    RunMeta(exact_proof=proof.to_json(), repeatable_seeds=False if proof.state == REFUTED else None).write(engine.log)
    engine._publish(PathNotice(a, proof.line))
    engine.proof_settled()
