"""`tui-eval resume RUN`: continue a run whose process died, from its log (`tui_eval.runtime.resume`)."""

from __future__ import annotations

from tui_eval.config.spec import RunSpec
from tui_eval.log.store import RunLog
from tui_eval.runs import open_log, resolve_run
from tui_eval.sweep.sweep_log import is_sweep

from .parsers import CommandParser


def main(argv: list[str]) -> int:
    parser = CommandParser(prog="tui-eval resume", description="Continue a run whose process died, from its log.")
    parser.add_argument("run", help="run name or log file")
    parser.add_argument("--headless", action="store_true", help="no UI (as the run itself may have had)")
    args = parser.parse_args(argv)
    from tui_eval.runtime.resume import check_resumable, resume_run

    path = resolve_run(args.run)
    meta = open_log(path).meta()
    if is_sweep(meta):  # a sweep goes on as it was started, with the episodes its log holds
        from . import sweep

        check_resumable(path, meta)
        return sweep.main([*meta["sweep"]["argv"], *(["--headless"] if args.headless else [])], resuming=True)
    return resume_run(path, headless=args.headless)


def saved_ray_address(argv: list[str]) -> str | None:
    """The `--ray-address` a run to resume was started with (read before Ray is set up), if any."""
    name = next((a for a in argv if not a.startswith("-")), None)
    try:
        reader = RunLog(resolve_run(name), readonly=True)
        spec = reader.meta().get("spec") or {}
        reader.close()
        return RunSpec.from_json(spec).ray_address if spec.get("checkpoint") else None
    except Exception:  # an unknown or unreadable run: resume itself says what is wrong
        return None
