"""A clip of one seed (the app's `c`): `tui-eval record` in a subprocess, with the run's own options, so
that the app's GIL stays free."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def record_argv(spec: dict[str, Any], seed: int, paths: list[str], explore: dict[str, Any], out: Path) -> list[str]:
    """`tui-eval record` for the run described by `spec` (RunSpec.to_json()), on one seed."""
    argv = [sys.executable, "-m", "tui_eval.cli", "record", str(spec["checkpoint"]), "--seed", str(seed),
            "--out", str(out), "--paths", ",".join(paths), "--device", str(spec.get("device") or "cpu")]
    for item in spec.get("imports") or []:
        argv += ["--import", str(item)]
    for item in spec.get("custom_paths") or []:
        argv += ["--path", str(item)]
    for option, key in (("--env", "env_id"), ("--module", "module"), ("--success-key", "success_key"),
                        ("--vs", "vs"), ("--agent-cfg", "agent_cfg"), ("--activation", "activation"),
                        ("--vecenv", "vecenv"), ("--vs-env", "vs_env"), ("--vs-vecenv", "vs_vecenv")):
        if spec.get(key):
            argv += [option, str(spec[key])]
    if spec.get("env_config"):
        import json

        argv += ["--env-config", json.dumps(spec["env_config"])]
    if spec.get("vs_env_config"):
        import json

        argv += ["--vs-env-config", json.dumps(spec["vs_env_config"])]
    if spec.get("generic_connectors"):
        argv.append("--generic-connectors")
    if spec.get("freeze_filters"):
        argv.append("--freeze-filters")
    for name in paths:
        if explore.get(name) is not None:
            argv += ["--explore", f"{name}={'on' if explore[name] else 'off'}"]
    return argv


def run_recording(argv: list[str], out: Path, done: Callable[[str], object]) -> None:
    """Run `tui-eval record` (`argv`, from `record_argv`) and tell `done` what came of it, in words."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
        message = (f"clip written: {result.stdout.strip() or out}" if result.returncode == 0 else
                   f"clip failed: {(result.stderr.strip().splitlines() or ['?'])[-1]}")
    except Exception as exc:  # the recording must not take the app down
        message = f"clip failed: {type(exc).__name__}: {exc}"
    done(message)
