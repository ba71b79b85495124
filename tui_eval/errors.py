"""How an exception is shown to the user: one line, never empty."""

from __future__ import annotations


def first_line(exc: BaseException, limit: int = 200) -> str:
    """`Type: first line of the message` (just `Type` when the message is empty), cut to `limit`."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
