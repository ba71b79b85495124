"""`tui-eval sweep RUN [RUN ...] [run options] [--round N] [--fail-if-not-best CKPT]`: which checkpoint of a
training run is best on held-out seeds, checkpoints eliminated as soon as an anytime-valid interval shows them
worse (tui_eval/sweep/)."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

from tui_eval.config.spec import BadInput
from tui_eval.exit_codes import EXIT_DIFFER, EXIT_INTERRUPTED, EXIT_OK
from tui_eval.quiet import quiet_libraries

from .parsers import RunParser
from .run import add_run_options, spec_from_args

EPISODES_PER_CHECKPOINT = 100  # the default budget, times the checkpoints
ALPHA = 0.05  # the chance that the best checkpoint is eliminated (anytime, all pairs together)


def build_parser() -> RunParser:
    parser = RunParser(prog="tui-eval sweep", description="Which checkpoint of a run is best on held-out seeds: "
                       "every checkpoint on the same seeds, the worse ones eliminated as soon as it is shown.")
    parser.add_argument("runs", nargs="+", metavar="RUN", help="a Tune experiment or trial folder, an rsl_rl or "
                        "mjlab run folder, or checkpoints one by one")
    parser.add_argument("--round", type=int, default=10, help="seeds per round (default 10)")
    parser.add_argument("--fail-if-not-best", metavar="CKPT", help="exit 3 when another checkpoint is shown better "
                        "than this one (its name, e.g. model_300.pt or checkpoint_000004)")
    add_run_options(parser)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.detach or args.frames:
        raise BadInput("sweep runs headless in the foreground; drop --detach / --frames")
    if args.round < 2:
        raise BadInput(f"--round expects 2 or more seeds, got {args.round}")
    json_path = args.json
    headless = args.headless
    args.checkpoint, args.headless, args.json = args.runs[0], True, None
    budget_given = args.episodes
    spec = spec_from_args(args)
    spec.in_process = True
    if json_path and not Path(json_path).expanduser().resolve().parent.is_dir():
        raise BadInput(f"--json {json_path}: its folder does not exist; create it or pick another file")
    quiet_libraries()
    from tui_eval.kinds import load_kind, sweep_candidates
    from tui_eval.sweep.race import Race, enter, labels, race, summary
    from tui_eval.user.code import import_user_code
    from tui_eval.views.sweep import leaderboard

    for item in spec.imports:
        import_user_code(item)
    candidates = sweep_candidates(args.runs)
    names = labels(candidates)
    if args.fail_if_not_best and args.fail_if_not_best not in names:
        raise BadInput(f"--fail-if-not-best {args.fail_if_not_best}: no such checkpoint; choose from "
                       f"{', '.join(names)}")
    budget = budget_given or EPISODES_PER_CHECKPOINT * len(candidates)
    print(f"tui-eval sweep: {len(candidates)} checkpoints, budget {budget} episodes, {args.round} seeds per round",
          file=sys.stderr, flush=True)
    entrants, kind = enter(spec, candidates, load_kind)
    try:
        name, why = (spec.paths[0], "--paths") if spec.paths else kind.sweep_path()
        explore = entrants[0].path.explore
        source = "--explore" if name in spec.explore else f"library default: {kind.explore_source(name)}"
        why += f"; explore {'on' if explore else 'off'} ({source})"
        print(f"  path: {name} ({why})", file=sys.stderr, flush=True)
        start = spec.seeds.start if spec.seeds is not None else kind.default_seeds(None)[0].start
        settings = Race(start, budget, ALPHA, spec.equivalence_margin, args.round)
        note = f"{name} ({why})"
        if headless:
            previous = signal.signal(signal.SIGINT, lambda signum, frame: _interrupted(settings))
            try:
                result = summary(race(entrants, settings, _progress), entrants, note, budget)
            finally:
                signal.signal(signal.SIGINT, previous)
        else:
            from tui_eval.runtime.sweep_live import run_live

            result = run_live(entrants, settings, note, f"tui-eval sweep: {len(candidates)} checkpoints, {name}")
    finally:
        for entrant in entrants:
            entrant.path.close()
    print(leaderboard(result))
    if json_path:
        Path(json_path).expanduser().write_text(json.dumps({"sweep": result}, indent=2, default=str))
    if result["outcome"] == "stopped":
        return EXIT_INTERRUPTED
    beaten = next((r for r in result["checkpoints"] if r["checkpoint"] == args.fail_if_not_best), None)
    return EXIT_DIFFER if beaten is not None and beaten["eliminated_by"] is not None else EXIT_OK


def _interrupted(settings: Any) -> None:
    print("\ninterrupted: stopping the sweep (the round in progress is dropped)", file=sys.stderr, flush=True)
    settings.stop.set()


def _progress(e: Any) -> None:
    alive = ", ".join(f"{a.name} {a.mean:.4g}" if a.mean is not None else a.name for a in e.alive())
    print(f"  round {e.rounds}: {e.spent()} episodes; in the race: {alive}", file=sys.stderr, flush=True)
