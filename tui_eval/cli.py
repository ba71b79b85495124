"""`tui-eval`: pick the subcommand (tui_eval.commands), turn bad input into one line and exit code 2."""

from __future__ import annotations

import sys
from collections.abc import Callable

from tui_eval.commands import attach, demo, diagnose, ls, record, report, resume, run, stop, sweep
from tui_eval.commands.run import build_parser, spec_from_args
from tui_eval.config.spec import run_option
from tui_eval.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, BadInput

__all__ = ["COMMANDS", "build_parser", "spec_from_args", "main", "entry", "not_a_command"]

#: `tui-eval NAME ...` runs COMMANDS[NAME] on the rest; anything else is `tui-eval CHECKPOINT [options]`
COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "demo": demo.main, "diagnose": diagnose.main, "record": record.main, "sweep": sweep.main, "ls": ls.main,
    "attach": attach.main, "stop": stop.main, "resume": resume.main, "report": report.main,
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from tui_eval.local_ray import prepare_environment
    from tui_eval.user.code import make_cwd_importable

    # before anything imports ray: a Ray started here listens on loopback only (a cluster has its own settings)
    prepare_environment(joining_cluster=_joins_cluster(argv))

    make_cwd_importable()  # the user's modules next to their experiment, as with `python -m`
    try:
        if argv and argv[0] in COMMANDS:
            return COMMANDS[argv[0]](argv[1:])
        return run.main(argv)
    except BadInput as exc:
        sys.stderr.write(f"tui-eval: error: {not_a_command(argv, str(exc)) or exc}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return EXIT_INTERRUPTED


def not_a_command(argv: list[str], error: str) -> str | None:
    """What to say of `tui-eval WORD CHECKPOINT ...` where WORD is neither a command nor a path (`tui-eval run
    CKPT`), in place of argparse's `error` ("unrecognized arguments: CKPT"); None otherwise."""
    import os

    word = argv[0] if argv else ""
    if (not error.startswith("unrecognized arguments") or not word or word.startswith("-") or os.sep in word
            or os.path.exists(word)):
        return None
    return (f"{word!r} is not a command (commands: {', '.join(sorted(COMMANDS))}); to evaluate a checkpoint, "
            "give it first: tui-eval CHECKPOINT [options]")


def _joins_cluster(argv: list[str]) -> bool:
    """`--ray-address` given, or resuming a run that had one (read from its log)."""
    flag = run_option("ray_address").flag
    if any(a == flag or a.startswith(f"{flag}=") for a in argv):
        return True
    if len(argv) >= 2 and argv[0] == "resume":
        return resume.saved_ray_address(argv[1:]) is not None
    return False


def entry() -> None:
    exit_at_once(main())


def exit_at_once(code: int) -> None:
    """End the process without the interpreter's teardown. Once a command has returned, what the teardown has left
    to do is unload torch's, RLlib's and Ray's modules: a second or more on a small machine (measured here: 1.1 to
    1.6 s after those imports alone; 3 to 5 s of a 16 s diagnose on 2 loaded cores). What matters of it is done
    here, in its order: other non-daemon threads are waited for, the exit hooks run (the local Ray's shutdown and
    the path processes' end among them), the output is flushed."""
    import atexit
    import os
    import threading

    try:
        for thread in threading.enumerate():
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a reader gone, or a stream closed: nothing left to say
                pass
        os._exit(code)


if __name__ == "__main__":
    entry()
