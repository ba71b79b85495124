"""tui-eval: evaluate an RL checkpoint along two inference paths on the same held-out seeds, and say whether, how
much and why they differ. `__version__` is the installed distribution's, read when first asked for (importing the
package stays free: every path's process imports it)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name != "__version__":
        raise AttributeError(f"module 'tui_eval' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tui-eval")
    except PackageNotFoundError:
        return "unknown (not installed)"
