"""Where a run writes (its log, its --json summary, its --report picture), settled and checked before anything
is loaded.

A location that cannot be written exits 2 in one line at once, not after an hour of evaluation; the
check writes and removes a probe file, because permission bits lie (root passes `os.access` on /proc).
`--json` and `--report` never create folders: theirs must exist. The log's folder is created (it is the run's).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import os
from pathlib import Path

from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput, first_line

RUNS_DIR = Path("tui-eval-runs")
#: what `tui-eval report` and `--report` write, told by the file's suffix
REPORT_SUFFIXES = (".png", ".svg", ".html")


def default_log_path(checkpoint: str, prefix: str = "") -> Path:
    """A new file under ./tui-eval-runs/ named after the time and the checkpoint (`prefix`: what it is, e.g. a
    sweep's "sweep-")."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    name = prefix + (Path(checkpoint).expanduser().resolve().name or "run")[:80]  # within a file name's limit
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
    check_nameable(log, "--log")
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
        check_nameable(target, "--json")
        if target.is_dir():
            raise BadInput(f"--json {target} is a folder; name a file, e.g. --json {target / 'summary.json'}")
        if not target.parent.is_dir():
            raise BadInput(f"--json {target}: folder {target.parent} does not exist; create it or choose "
                           "another path")
        _probe(target.parent, str(target), "--json")
        spec.json = str(target.resolve())
    if spec.report:
        if importlib.util.find_spec("matplotlib") is None:  # said now, not when the run ends
            raise BadInput("--report needs matplotlib: pip install 'tui-eval[report]'")
        spec.report = str(check_report_target(Path(spec.report), "--report"))


def check_nameable(target: Path, option: str) -> None:
    """BadInput when `target` cannot even be looked up (a name too long, a file where a folder should be)."""
    try:
        target.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        shown = str(target) if len(str(target)) < 200 else str(target)[:200] + "..."
        raise BadInput(f"{option} {shown}: {exc.strerror.lower() if exc.strerror else first_line(exc)}; "
                       "choose another file") from None


def check_report_target(target: Path, option: str) -> Path:
    """A report's file, absolute: a suffix it can be drawn as, in a folder that exists and can be written."""
    target = target.expanduser()
    check_nameable(target, option)
    if target.is_dir():
        raise BadInput(f"{option} {target} is a folder; name a file, e.g. {option} {target / 'report.png'}")
    if target.suffix.lower() not in REPORT_SUFFIXES:
        raise BadInput(f"{option} {target}: a report is {', '.join(REPORT_SUFFIXES)}, not "
                       f"{target.suffix or 'a file without a suffix'}; e.g. {option} {target.with_suffix('.png')}")
    if not target.parent.is_dir():
        raise BadInput(f"{option} {target}: folder {target.parent} does not exist; create it or choose another path")
    _probe(target.parent, str(target), option)
    return target.resolve()


def stderr_path(log_path: str | Path) -> Path:
    """Where libraries' stderr goes while the app holds the terminal."""
    return Path(f"{Path(log_path).with_suffix('')}.stderr.txt")


def report_path(log_path: str | Path) -> Path:
    """Where `tui-eval report` draws a run when not told: next to its log."""
    return Path(f"{Path(log_path).with_suffix('')}.report.png")


def output_path(log_path: str | Path) -> Path:
    """Where a run without a terminal (detached, or after SIGHUP) writes its progress and summary."""
    return Path(f"{Path(log_path).with_suffix('')}.out.txt")
