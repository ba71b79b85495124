"""A clip of one seed (the app's `c`): `tui-eval record` in a subprocess, with the run's own options, so
that the app's GIL stays free."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui_eval.config.spec import RunSpec


def record_argv(spec: dict[str, Any], seed: int, paths: list[str], explore: dict[str, Any], out: Path) -> list[str]:
    """`tui-eval record` for the run described by `spec` (RunSpec.to_json()), on one seed: the run's options
    that a clip keeps (their declarations: `tui_eval.config.spec.RUN_OPTIONS`), these paths and explore settings."""
    run = replace(RunSpec.from_json(spec), paths=list(paths),
                  explore={name: bool(explore[name]) for name in paths if explore.get(name) is not None})
    return [sys.executable, "-m", "tui_eval.cli", "record", *run.to_argv(recording=True), "--seed", str(seed),
            "--out", str(out)]


def run_recording(argv: list[str], out: Path, done: Callable[[str], object]) -> None:
    """Run `tui-eval record` (`argv`, from `record_argv`) and tell `done` what came of it, in words."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
        message = (f"clip written: {result.stdout.strip() or out}" if result.returncode == 0 else
                   f"clip failed: {(result.stderr.strip().splitlines() or ['?'])[-1]}")
    except Exception as exc:  # the recording must not take the app down
        message = f"clip failed: {type(exc).__name__}: {exc}"
    done(message)
