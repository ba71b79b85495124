"""`tui-eval CKPT --detach`: the same run in a background process of its own session (no terminal, so
no SIGHUP), its output in `<log>.out.txt`. Returns once that process holds the log."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput
from tui_eval.outputs import check_outputs, output_path

from . import log_lock

STARTUP_S = 20.0  # how long to wait for the background run to take its log


def start_detached(spec: RunSpec) -> int:
    """Start `spec` headless in the background: its options (RunSpec.to_argv), not this terminal's ones."""
    check_outputs(spec)  # settles spec.log (absolute) and spec.json; bad locations exit 2 here
    return start_in_background(Path(spec.log or ""), [*spec.to_argv(), "--headless"])  # log and json absolute now


def start_in_background(log: Path, child_args: list[str], what: str = "run") -> int:
    """`tui-eval CHILD_ARGS` in a background process that takes `log`; returns once it holds it."""
    log_lock.claim(log).release()  # in use or already holding a run: say so now, not in the background
    log_lock.lock_path(log).unlink(missing_ok=True)
    out = output_path(log)
    with open(out, "ab") as sink, open(os.devnull, "rb") as nothing:
        child = subprocess.Popen([sys.executable, "-m", "tui_eval.cli", *child_args], stdin=nothing, stdout=sink,
                                 stderr=subprocess.STDOUT, start_new_session=True, cwd=os.getcwd())
    deadline = time.monotonic() + STARTUP_S
    while log_lock.holder(log) is None:
        code = child.poll()
        if code is not None:
            raise BadInput(f"the background {what} ended at once (exit {code}): {_last_line(out)}")
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    name = log.stem
    sys.stdout.write(f"{what} {name} started in the background (pid {child.pid})\n"
                     f"  log:    {log}\n  output: {out}\n"
                     f"  attach: tui-eval attach {name}\n  stop:   tui-eval stop {name}\n")
    return 0


def _last_line(path: Path) -> str:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1].removeprefix("tui-eval: error: ") if lines else "no output"
