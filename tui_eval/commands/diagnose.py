"""`tui-eval diagnose CHECKPOINT [run options] [--seed S] [--json FILE]`: findings, best first."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from tui_eval.errors import BadInput
from tui_eval.quiet import quiet_libraries

from .run import build_parser, spec_from_args


def main(argv: list[str]) -> int:
    """Diagnose takes the run options (the run's parser, with `--seed`)."""
    parser = build_parser()
    parser.prog = "tui-eval diagnose"
    parser.add_argument("--seed", type=int,
                        help="replay this seed (default: the first paired seed whose returns differ)")
    args = parser.parse_args(argv)
    if args.detach:
        raise BadInput("diagnose runs in the foreground; drop --detach")
    if args.report:
        raise BadInput("diagnose draws no report; drop --report (tui-eval report RUN draws a run)")
    json_path = args.json
    args.json, args.headless = None, True
    if args.episodes is None:
        args.episodes = 5
    spec = spec_from_args(args)
    spec.in_process = True  # the doctor reads and replays the paths' live pieces: they are built in this process
    if json_path:
        folder = Path(json_path).expanduser().resolve().parent
        if not folder.is_dir():
            raise BadInput(f"--json {json_path}: folder {folder} does not exist; create it or pick another file")
    quiet_libraries()
    from tui_eval.doctor.diagnosis import diagnose_plan
    from tui_eval.session import plan_run
    from tui_eval.user.code import import_user_code

    for item in spec.imports:
        import_user_code(item)
    tmp = None
    if not spec.log:
        tmp = tempfile.TemporaryDirectory(prefix="tui-eval-diagnose-")
        spec.log = str(Path(tmp.name) / "diagnose.sqlite")
    try:
        plan = plan_run(spec)
        if len(plan.paths) < 2:
            raise BadInput("diagnose compares two or more paths; pass --paths A,B")
        err = sys.stderr
        err.write(f"tui-eval diagnose: {plan.kind.checkpoint} ({', '.join(plan.paths)}; explore "
                  + ", ".join(f"{n} {'on' if plan.explore[n] else 'off'}" for n in plan.paths) + ")\n")
        t0 = time.perf_counter()

        def progress(step: str) -> None:
            err.write(f"  [{time.perf_counter() - t0:5.1f}s] {step} …\n")
            err.flush()

        diagnosis = diagnose_plan(plan, seed=args.seed, progress=progress)
    finally:
        if tmp is not None:
            tmp.cleanup()
    sys.stdout.write(diagnosis.text() + "\n")
    if json_path:
        Path(json_path).write_text(json.dumps(diagnosis.to_json(), indent=2, default=str))
    return 0

