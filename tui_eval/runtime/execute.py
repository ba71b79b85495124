"""Run a spec in this process, which owns its log: plan it, then the headless view or the live app."""

from __future__ import annotations

import sys
from collections.abc import Callable

from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput
from tui_eval.log.lifecycle import RunStatus

from .owner import RunOwner


def execute(spec: RunSpec, log: RunOwner | Callable[[], RunOwner], *, headless: bool, frames=None) -> int:
    """Plan and run `spec` in this process. `log`: the owner of the run's log (a resumed run holds it already),
    or what takes it, once the checkpoint is read and the plan settled: bad input until then leaves no log."""
    from tui_eval.session import open_run

    taken = [log] if isinstance(log, RunOwner) else []  # the owner, once it holds the log: a failure closes it

    def take_log() -> RunOwner:
        if not taken:
            taken.append(log if isinstance(log, RunOwner) else log())
        return taken[0]

    try:
        _import_user_code(spec)
        if not headless:  # planning may start ray (seconds) before the app can show anything
            sys.stderr.write(f"tui-eval: reading {spec.checkpoint} …\n")
            sys.stderr.flush()
        plan, owner, engine = open_run(spec, take_log, load_paths=headless, on_planned=_print_plan,
                                       on_loaded=_print_loaded)
        if engine is None:  # the app loads the paths itself, showing them as they come
            from tui_eval.runtime.app_process import run_app

            return run_app(plan, owner, frames=frames)
    except BaseException as exc:
        if taken:
            taken[0].close(RunStatus.FAILED, error=_failure(exc))
        raise
    err = sys.stderr
    for path in engine.paths.values():
        err.write(f"{path.name:>17}: {path.description}\n")
        if path.placement:
            err.write(f"{'':>17}  Ray workers at {', '.join(path.placement)}\n")
    from tui_eval.runtime.headless_run import run_headless

    owner.serve(engine)
    return run_headless(engine, owner=owner, json_path=spec.json, fail_on_differ=spec.fail_on_differ,
                        report_path=spec.report)


def _import_user_code(spec: RunSpec) -> None:
    from tui_eval.user.code import import_user_code

    for item in spec.imports:  # before the checkpoint is read: unpickling it may need them
        import_user_code(item)


def _failure(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, BadInput) else type(exc).__name__


def _print_loaded(name: str, seconds: float) -> None:
    sys.stderr.write(f"{'loaded ' + name:>17}: {seconds:.1f}s\n")


def _print_plan(plan) -> None:
    err = sys.stderr  # the stream of the moment the plan is settled (a test may swap it)
    if plan.kind.resolved_note:
        err.write(plan.kind.resolved_note + "\n")
    for key, value in plan.facts.items():
        err.write(f"{key:>17}: {value}\n")
    err.write(f"{'seeds':>17}: {plan.seeds} ({plan.seeds_note})\n")
    for name in plan.paths:
        err.write(f"{'explore ' + name:>17}: {'on' if plan.explore[name] else 'off'} ({plan.explore_source[name]})\n")
    err.write(f"{'log':>17}: {plan.log_path}\n")
    err.flush()
