"""mjlab's task registry: which task a run trained, checked before anything is built."""

from __future__ import annotations

import os
import sys

from tui_eval.errors import BadInput
from tui_eval.integrations.rsl_rl.paths.model import quiet
from tui_eval.paths.native_output import native_stdout_quiet


def require_mjlab() -> None:
    """One line, not a traceback, when the run is mjlab's and mjlab is not installed here."""
    try:
        import mjlab  # noqa: F401
    except ImportError:
        raise BadInput("this is an mjlab run folder and mjlab is not installed: pip install 'tui-eval[mjlab]' (keep "
                       "your torch: README, mjlab)") from None


def quiet_warp() -> None:
    """Warp prints its devices and kernel cache when it starts (and, without a GPU, a CUDA warning from C on
    descriptor 2), and a line per kernel module it loads: not the user's business. mjlab reads MJLAB_WARP_QUIET."""
    os.environ.setdefault("MJLAB_WARP_QUIET", "1")
    import warp

    config = warp.config
    config.quiet = True  # type: ignore[attr-defined]
    config.log_level = warp.LOG_WARNING  # the per-module load lines are at LOG_INFO
    sys.stderr.flush()  # warp.init() starts the runtime once; later calls return at once
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        with native_stdout_quiet():
            warp.init()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def registered() -> list[str]:
    """Every task mjlab (and the user's `--import`ed modules) registered."""
    require_mjlab()
    quiet_warp()
    with quiet():
        import mjlab.tasks  # noqa: F401  (registers mjlab's own tasks on import)
        from mjlab.tasks.registry import list_tasks

    return list(list_tasks())


def experiment_of(task: str) -> str | None:
    from mjlab.tasks.registry import load_rl_cfg

    try:
        return str(load_rl_cfg(task).experiment_name)
    except Exception:  # a task whose cfg cannot be built says nothing about its experiment
        return None


def check_task(task: str | None, experiment: str | None, flag: str = "--env") -> str:
    """`task` when mjlab knows it; else one line naming the registered tasks that train `experiment`."""
    tasks = registered()
    if task is not None and task in tasks:
        return task
    matching = [t for t in tasks if experiment and experiment_of(t) == experiment]
    if matching:
        hint = f"tasks whose experiment_name is {experiment!r}: {', '.join(matching)}"
    else:
        hint = f"registered tasks: {', '.join(tasks)}; a task of your own: --import your_module"
    if task is None:
        raise BadInput(f"an mjlab run folder does not say which task it trained: pass {flag} TASK ({hint})")
    raise BadInput(f"{flag} {task!r} is not a registered mjlab task ({hint})")
