"""A comparison is void once a path failed and was given up.

The episodes such a path finished before it failed came from a path that was not working as it claims;
a verdict built on them (`differ`, `equivalent`, "identical seed by seed") would be about the failure,
not the checkpoint. The headless table, the progress line, `--json` and the app all say "void" instead,
with the failed path and its error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

VOID = "void"


def void_reason(failures: Iterable[Any]) -> str | None:
    """Why the comparison is void, or None. `failures`: PathFailed events or the log's `path_errors`
    dicts (path, message, gave_up); only a path given up voids it (a restarted one ran its seeds again)."""
    given_up: dict[str, str] = {}
    for failure in failures:
        get = failure.get if isinstance(failure, dict) else lambda key, f=failure: getattr(f, key, None)
        if get("gave_up"):
            given_up.setdefault(str(get("path")), str(get("message")))
    if not given_up:
        return None
    failed = "; ".join(f"path {path} failed and was given up ({message})" for path, message in given_up.items())
    return f"{failed}: its episodes decide nothing"


def voided(comparison: dict[str, Any] | None, reason: str) -> dict[str, Any] | None:
    """The summary's `comparison` with its verdict and numbers taken away: verdict "void", exact null."""
    if comparison is None:
        return None
    return {"a": comparison.get("a"), "b": comparison.get("b"), "paired": comparison.get("paired"),
            "verdict": VOID, "exact": None, "diff_mean": None, "diff_cs95": None, "void": reason,
            "reason": reason}


def void_line(reason: str) -> str:
    """The verdict line of the headless table for a void comparison."""
    return f"verdict: VOID — no verdict from a failed path\n  {reason}"
