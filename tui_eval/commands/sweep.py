"""`tui-eval sweep RUN [RUN ...] [run options] [--round N] [--fail-if-not-best CKPT]`: which checkpoint of a
training run is best on held-out seeds, checkpoints eliminated as soon as an anytime-valid interval shows them
worse (tui_eval/sweep/). The sweep's process (its log, detach, resume) is tui_eval/runtime/sweep_run.py."""

from __future__ import annotations

from pathlib import Path

from tui_eval.errors import BadInput
from tui_eval.outputs import check_outputs, default_log_path

from .parsers import RunParser
from .run import add_run_options, spec_from_args


def build_parser() -> RunParser:
    parser = RunParser(prog="tui-eval sweep", description="Which checkpoint of a run is best on held-out seeds: "
                       "every checkpoint on the same seeds, the worse ones eliminated as soon as it is shown.")
    parser.add_argument("runs", nargs="+", metavar="RUN", help="a training run's folder (what each kind opens: "
                        "tui-eval --help), or its checkpoints one by one")
    parser.add_argument("--round", type=int, default=10, help="seeds per round (default 10)")
    parser.add_argument("--fail-if-not-best", metavar="CKPT", help="exit 3 when another checkpoint is shown better "
                        "than this one (its name, e.g. model_300.pt or checkpoint_000004)")
    add_run_options(parser)
    return parser


def main(argv: list[str], *, resuming: bool = False) -> int:
    """A sweep in this process, or (`--detach`) in the background; `resuming`: go on with the sweep whose log
    `--log` names, its finished episodes counted and not played again."""
    args = build_parser().parse_args(argv)
    if args.frames or args.frames_renderer or args.frames_fps:
        raise BadInput("a sweep shows no frames; drop --frames (tui-eval CHECKPOINT --frames shows one checkpoint's)")
    if args.round < 2:
        raise BadInput(f"--round expects 2 or more seeds, got {args.round}")
    headless, detach = args.headless, args.detach
    args.checkpoint, args.headless, args.detach = args.runs[0], True, False
    spec = spec_from_args(args)
    spec.in_process = True
    if isinstance(spec.equivalence_margin, str):
        raise BadInput("a sweep takes --equivalence-margin as a number (the noise floor is measured between two paths "
                       "of one checkpoint)")
    spec.episodes = args.episodes  # the budget; None: the default, once the checkpoints are counted
    if not spec.log:
        spec.log = str(default_log_path(args.runs[0], prefix="sweep-"))
    check_outputs(spec)  # the log, --json and --report: absolute, writable, before anything loads
    runs = [str(Path(r).expanduser().resolve()) for r in args.runs]
    own = ["--round", str(args.round)] + (["--fail-if-not-best", args.fail_if_not_best]
                                          if args.fail_if_not_best else [])
    from tui_eval.runtime.sweep_run import Sweep, run_sweep, start_sweep_detached

    sweep = Sweep(spec, runs, args.round, args.fail_if_not_best, own)
    if detach:  # --report travels in the sweep's command line: its background process draws it
        return start_sweep_detached(sweep)
    return run_sweep(sweep, headless=headless, resuming=resuming)
