"""What goes wrong, and how it is said: `BadInput` (the user's one line), every exit code tui-eval returns
(docs/contract.md's list), and how any other exception is shown in one line, never empty."""

from __future__ import annotations

EXIT_OK = 0  # the run completed (or the view was left)
EXIT_BAD_INPUT = 2  # bad input or an unsupported checkpoint feature: one line on stderr
EXIT_DIFFER = 3  # the paths differ, with --fail-on-differ; worse, with --fail-if-worse
EXIT_PATH_FAILED = 4  # a path failed and was given up
EXIT_UNDECIDED = 5  # --fail-if-worse: undecided at the budget
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT); what finished is kept
EXIT_TERMINATED = 143  # SIGTERM (128 + SIGTERM, as shells report it); the run stopped cleanly


class BadInput(Exception):
    """The user's input cannot be used. The message is one line: what is wrong and what to do.

    The CLI prints it and exits 2, never with a traceback.
    """


def first_line(exc: BaseException, limit: int = 200) -> str:
    """`Type: first line of the message` (just `Type` when the message is empty), cut to `limit`."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
