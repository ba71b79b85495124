"""Every exit code tui-eval returns (docs/contract.md's list), in one place."""

from __future__ import annotations

EXIT_OK = 0  # the run completed (or the view was left)
EXIT_BAD_INPUT = 2  # bad input or an unsupported checkpoint feature: one line on stderr
EXIT_DIFFER = 3  # the paths differ, with --fail-on-differ; worse, with --fail-if-worse
EXIT_PATH_FAILED = 4  # a path failed and was given up
EXIT_UNDECIDED = 5  # --fail-if-worse: undecided at the budget
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT); what finished is kept
EXIT_TERMINATED = 143  # SIGTERM (128 + SIGTERM, as shells report it); the run stopped cleanly
