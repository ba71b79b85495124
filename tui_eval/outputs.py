"""Where a run writes (its log, its --json summary), settled and checked before anything is loaded.

A location that cannot be written exits 2 in one line at once, not after an hour of evaluation; the
check writes and removes a probe file, because permission bits lie (root passes `os.access` on /proc).
`--json` never creates folders: its folder must exist. The log's folder is created (it is the run's).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from tui_eval.config.spec import BadInput, RunSpec
from tui_eval.errors import first_line

RUNS_DIR = Path("tui-eval-runs")


def default_log_path(checkpoint: str, prefix: str = "") -> Path:
    """A new file under ./tui-eval-runs/ named after the time and the checkpoint (`prefix`: what it is, e.g. a
    sweep's "sweep-")."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    name = prefix + (Path(checkpoint).expanduser().resolve().name or "run")
    path, n = RUNS_DIR / f"{stamp}-{name}.sqlite", 1
    while path.exists():
        n += 1
        path = RUNS_DIR / f"{stamp}-{name}-{n}.sqlite"
    return path


def _probe(folder: Path, what: str, option: str) -> None:
    probe = folder / f".tui-eval-probe-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise BadInput(f"{option} {what}: cannot write in {folder} ({first_line(exc)}); choose a writable "
                       "location") from None


def check_outputs(spec: RunSpec) -> None:
    """Settle `spec.log` (absolute; a default when not given) and check it and `spec.json` can be written."""
    log = Path(spec.log).expanduser() if spec.log else default_log_path(spec.checkpoint)
    if log.is_dir():
        raise BadInput(f"--log {log} is a folder; name a file, e.g. --log {log / 'run.sqlite'}")
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"--log {log}: cannot create its folder ({first_line(exc)}); choose a writable "
                       "location") from None
    _probe(log.parent, str(log), "--log")
    spec.log = str(log.resolve())
    if spec.json:
        target = Path(spec.json).expanduser()
        if target.is_dir():
            raise BadInput(f"--json {target} is a folder; name a file, e.g. --json {target / 'summary.json'}")
        if not target.parent.is_dir():
            raise BadInput(f"--json {target}: folder {target.parent} does not exist; create it or choose "
                           "another path")
        _probe(target.parent, str(target), "--json")
        spec.json = str(target.resolve())


def stderr_path(log_path: str | Path) -> Path:
    """Where libraries' stderr goes while the app holds the terminal."""
    return Path(f"{Path(log_path).with_suffix('')}.stderr.txt")


def output_path(log_path: str | Path) -> Path:
    """Where a run without a terminal (detached, or after SIGHUP) writes its progress and summary."""
    return Path(f"{Path(log_path).with_suffix('')}.out.txt")
