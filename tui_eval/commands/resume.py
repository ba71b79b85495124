"""`tui-eval resume RUN`: continue a run whose process died, from its log (`tui_eval.runtime.resume`)."""

from __future__ import annotations

from tui_eval.config.spec import RunSpec
from tui_eval.log.store import RunLog
from tui_eval.runs import resolve_run

from .parsers import CommandParser


def main(argv: list[str]) -> int:
    parser = CommandParser(prog="tui-eval resume", description="Continue a run whose process died, from its log.")
    parser.add_argument("run", help="run name or log file")
    parser.add_argument("--headless", action="store_true", help="no UI (as the run itself may have had)")
    args = parser.parse_args(argv)
    from tui_eval.runtime.resume import resume_run

    return resume_run(resolve_run(args.run), headless=args.headless)


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
