"""The doctor for a running app (`d`): the run's own records as the batch, the paths built afresh.

The run's paths keep running undisturbed, so the doctor replays on new ones, each from the start of an
episode: a state that a path carries over from one episode to the next (a recurrent state not reset)
cannot show in that replay. Where a path carries state the diagnosis says so, and where the run's returns
differ on a seed that the fresh paths replay alike, that is the finding (with how to prove it: `tui-eval
diagnose` plays episodes on the paths before its replay).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tui_eval.doctor.diagnosis import Diagnosis, diagnose_multi_agent_paths, diagnose_paths
from tui_eval.doctor.findings import UNEXPLAINED, Finding


def diagnose_live(plan, records, explore: dict[str, bool],
                  progress: Callable[[str], None] = lambda s: None) -> Diagnosis:
    """The doctor on freshly built paths, with the run's records as the batch and the explore each path runs
    with now."""
    batch: dict[str, dict[int, float]] = {}
    for r in records:
        if r.explore is None or r.explore == explore.get(r.path, r.explore):
            batch.setdefault(r.path, {})[r.seed] = r.ret
    built: dict[str, Any] = {}
    try:
        for name in plan.paths:
            progress(f"loading {name}")
            built[name] = plan.kind.build_path(name, explore.get(name, plan.explore[name]))
        if getattr(plan.kind, "multi_agent", False):
            kept = [r for r in records if r.explore is None or r.explore == explore.get(r.path, r.explore)]
            diagnosis = diagnose_multi_agent_paths(built, plan.kind, kept, None, progress)
        else:
            diagnosis = diagnose_paths(built, plan.kind, batch, None, progress)
        stateful = [name for name, path in built.items() if path.keeps_state()]
    finally:
        for path in built.values():
            try:
                path.close()
            except Exception:
                pass
    if stateful:
        note_fresh_state(diagnosis, stateful, plan)
    return diagnosis


def note_fresh_state(d: Diagnosis, stateful: list[str], plan) -> None:
    """Say what a replay on fresh paths cannot see; a divergence only the run's returns show becomes a finding."""
    who = ", ".join(f"`{n}`" for n in stateful)
    d.notes.append(f"the paths were built afresh for this diagnosis and replayed from the episode's start: a state "
                   f"{who} carries over from the run's earlier episodes is not seen here")
    for i, f in enumerate(d.findings):
        if f.cause != UNEXPLAINED or f.step is not None:
            continue
        a, b = f.paths
        seeds = [s for s in sorted(d.batch.get(a, {})) if s in d.batch.get(b, {})
                 and abs(d.batch[a][s] - d.batch[b][s]) > 1e-4 * max(1.0, abs(d.batch[a][s]))]
        shown = ", ".join(f"{s} ({a} {d.batch[a][s]:.6g}, {b} {d.batch[b][s]:.6g})" for s in seeds[:3])
        d.findings[i] = Finding(
            f"a state carried over from earlier episodes (e.g. a recurrent state not reset between episodes) in "
            f"{who}: the run's returns differ, freshly built paths agree",
            f"the run's returns differ on seed(s) {shown}; built afresh, the paths send the same actions at every "
            f"step of seed {d.seed}",
            f"reset the state at every episode's start; to prove it, run tui-eval diagnose {plan.kind.checkpoint} "
            f"--paths {a},{b} (it plays episodes on the paths before its replay)",
            [a, b], "action", d.seed, None, 60, "recurrent")
