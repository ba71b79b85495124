"""The process around a sweep, as around a run (owner.py): it holds the sweep's log, lists itself, serves a
control channel (stop, pause), appends every finished episode at once, keeps the board after each round, and
ends truthfully. A terminal that goes (SIGHUP) leaves the sweep running, its output in `<log>.out.txt`;
`--detach` starts it so; `tui-eval resume` goes on from its log without playing a finished episode again."""

from __future__ import annotations

import json
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.errors import EXIT_DIFFER, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, BadInput
from tui_eval.log.lifecycle import RunMeta, RunStatus
from tui_eval.log.store import RunLog

from .owner import RunOwner
from .sweep_control import SweepControl

EPISODES_PER_CHECKPOINT = 100  # the default budget, times the checkpoints
ALPHA = 0.05  # the chance that the best checkpoint is eliminated (anytime, all pairs together)


@dataclass
class Sweep:
    """A sweep as asked: its spec (log and --json settled), its runs (absolute), and its own options."""

    spec: RunSpec
    runs: list[str]
    round_size: int
    fail_if_not_best: str | None
    own_argv: list[str]  # --round and --fail-if-not-best, as given
    ended_by: list[str] = field(default_factory=list)  # "interrupt" (Ctrl-C), "terminate" (SIGTERM)

    def argv(self) -> list[str]:
        """The command line (after `tui-eval sweep`) that gives this sweep back: a detached or resumed one."""
        return [*self.runs, *self.spec.to_argv()[1:], *self.own_argv]


def checked_candidates(sweep: Sweep) -> list:
    """The runs' checkpoints, or BadInput (no checkpoint, two kinds, an unknown --fail-if-not-best)."""
    from tui_eval.kinds import sweep_candidates
    from tui_eval.sweep.race import labels
    from tui_eval.user.code import import_user_code

    for item in sweep.spec.imports:
        import_user_code(item)
    candidates = sweep_candidates(sweep.runs)
    names = labels(candidates)
    if sweep.fail_if_not_best and sweep.fail_if_not_best not in names:
        raise BadInput(f"--fail-if-not-best {sweep.fail_if_not_best}: no such checkpoint; choose from "
                       f"{', '.join(names)}")
    one_round = sweep.round_size * len(candidates)
    if sweep.spec.episodes is not None and sweep.spec.episodes < one_round:  # it would play nothing at all
        raise BadInput(f"--episodes {sweep.spec.episodes} is less than one round ({sweep.round_size} seeds x "
                       f"{len(candidates)} checkpoints = {one_round} episodes): give --episodes {one_round} or "
                       "more, or a smaller --round")
    return candidates


def start_sweep_detached(sweep: Sweep) -> int:
    from .detach import start_in_background

    checked_candidates(sweep)  # what is wrong with the runs is said here, not in the background

    return start_in_background(Path(sweep.spec.log or ""), ["sweep", *sweep.argv(), "--headless"], what="sweep")


def run_sweep(sweep: Sweep, *, headless: bool, resuming: bool = False) -> int:
    """Claim the log, enter every checkpoint, race, write the end; the exit code."""
    from tui_eval.quiet import quiet_libraries

    quiet_libraries()
    candidates = checked_candidates(sweep)  # bad runs leave no log behind
    owner = RunOwner(sweep.spec, resuming=True) if resuming else RunOwner(sweep.spec)
    try:
        result = _sweep(sweep, candidates, owner, headless, resuming)
    except BaseException as exc:
        owner.close(RunStatus.FAILED, error=str(exc) if isinstance(exc, BadInput) else type(exc).__name__)
        raise
    stopped = result["outcome"] == "stopped"
    status = RunStatus.INTERRUPTED if "interrupt" in sweep.ended_by else \
        RunStatus.STOPPED if stopped else RunStatus.DONE
    result["status"] = str(status)
    _report(result, sweep.spec.json)
    owner.close(status)
    if sweep.spec.report:
        from .finish import draw_report

        draw_report(sweep.spec.log or "", sweep.spec.report, sys.stderr)
    if stopped:
        return EXIT_TERMINATED if "terminate" in sweep.ended_by else EXIT_INTERRUPTED
    beaten = next((r for r in result["checkpoints"] if r["checkpoint"] == sweep.fail_if_not_best), None)
    return EXIT_DIFFER if beaten is not None and beaten["eliminated_by"] is not None else EXIT_OK


def _sweep(sweep: Sweep, candidates: list, owner: RunOwner, headless: bool, resuming: bool) -> dict[str, Any]:
    from tui_eval.kinds import load_kind
    from tui_eval.sweep.race import Board, Race, enter
    from tui_eval.sweep.sweep_log import SweepRecord

    spec = sweep.spec
    spec.episodes = budget = spec.episodes or EPISODES_PER_CHECKPOINT * len(candidates)
    say = sys.stderr
    say.write(f"tui-eval sweep: {len(candidates)} checkpoints, budget {budget} episodes, {sweep.round_size} seeds "
              f"per round\n  log: {owner.log_path}\n")
    say.flush()
    entrants, kind = enter(spec, candidates, load_kind)
    try:
        name, why = (spec.paths[0], "--paths") if spec.paths else kind.sweep_path()
        source = "--explore" if name in spec.explore else f"library default: {kind.explore_source(name)}"
        note = f"{name} ({why}; explore {'on' if entrants[0].path.explore else 'off'} ({source}))"
        say.write(f"  path: {note}\n")
        say.flush()
        start = spec.seeds.start if spec.seeds is not None else kind.default_seeds(None)[0].start
        margin = spec.equivalence_margin if not isinstance(spec.equivalence_margin, str) else None
        settings = Race(start, budget, ALPHA, margin, sweep.round_size)
        log = RunLog(owner.log_path)
        record = SweepRecord(log)
        earlier = record.earlier() if resuming else []
        record.start(sweep.argv(), [_candidate_json(x) for x in entrants], note, budget)
        board = Board(entrants, settings, {"run": sweep.runs[0], "runs": sweep.runs, "path": note,
                                           "log": str(owner.log_path)}, record)
        control = SweepControl(settings, owner.log_path)
        owner.control = control  # closed with the owner
        RunMeta(status=RunStatus.RUNNING, control=str(control.path), seeds=[start, None]).write(log)
        if earlier:
            say.write(f"  resuming: {len(earlier)} finished episodes from the log are counted, not played again\n")
        return _race(sweep, owner, board, earlier, headless)
    finally:
        for entrant in entrants:
            entrant.path.close()


def _race(sweep: Sweep, owner: RunOwner, board: Any, earlier: list, headless: bool) -> dict[str, Any]:
    from tui_eval.sweep.race import race

    settings = board.settings

    def ended_by(why: str) -> None:
        sweep.ended_by.append(why)
        settings.stop.set()

    restore = owner.install_signals(on_term=lambda: ended_by("terminate"), on_hangup=owner.detach_from_terminal)
    try:
        if not headless:
            from .sweep_live import run_live

            return run_live(board, f"tui-eval sweep: {len(board.entrants)} checkpoints", earlier, owner,
                            on_interrupt=lambda: ended_by("interrupt"), on_terminate=lambda: ended_by("terminate"))
        previous = signal.signal(signal.SIGINT, lambda signum, frame: _interrupted(ended_by))
        try:
            e = race(board.entrants, settings, lambda e: _after_round(e, board), board.record.episode, earlier)
        finally:
            signal.signal(signal.SIGINT, previous)
        return board(e)
    finally:
        restore()


def _after_round(e: Any, board: Any) -> None:
    board(e)
    alive = ", ".join(f"{a.name} {a.mean:.4g}" if a.mean is not None else a.name for a in e.alive())
    print(f"  round {e.rounds}: {e.spent()} episodes; in the race: {alive}", file=sys.stderr, flush=True)


def _interrupted(ended_by: Any) -> None:
    print("\ninterrupted: stopping the sweep (the round in progress is dropped)", file=sys.stderr, flush=True)
    ended_by("interrupt")


def _candidate_json(entrant: Any) -> dict[str, Any]:
    c = entrant.candidate
    return {"label": entrant.label, "path": str(c.path), "iteration": c.iteration, "metric": c.metric,
            "metric_name": c.metric_name}


def _report(result: dict[str, Any], json_path: str | None) -> None:
    from tui_eval.views.sweep import leaderboard

    print(leaderboard(result), flush=True)
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2, default=str))
