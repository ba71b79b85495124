"""Slow preparations of the session (training tiny checkpoints, mypy) run in the background, one at a time,
from the first test on, so that they overlap the tests that need none of them; a fixture that needs one
waits for it (or runs it at once when the session did not start it).

Each job is a subprocess with its own folder under the session's temporary directory: what it writes
is the same as when the fixture ran it itself; only when it runs changes. One job at a time, with one
torch thread each, so that the foreground test keeps a core on a 2-core machine.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Job:
    """A named subprocess: `command(folder)` gives (argv, cwd, env) once `folder` exists."""

    name: str
    command: Callable[[Path], tuple[list[str], Path, dict[str, str]]]
    timeout: float = 600
    folder: Path | None = None
    result: subprocess.CompletedProcess | None = None
    done: threading.Event = field(default_factory=threading.Event)
    claimed: bool = False
    proc: subprocess.Popen | None = None
    #: perf_counter() when it started and ended, and how long the tests waited for it (the session's report)
    started: float | None = None
    ended: float | None = None
    waited: float = 0.0

    def run(self) -> None:
        assert self.folder is not None
        self.started = time.perf_counter()
        try:
            argv, cwd, env = self.command(self.folder)
            quiet = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            self.proc = subprocess.Popen(argv, cwd=cwd, env={**quiet, **env}, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)
            try:
                out, err = self.proc.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                out, err = self.proc.communicate()
                err += f"\n{self.name}: no answer within {self.timeout:g}s"
            self.result = subprocess.CompletedProcess(argv, self.proc.wait(), out, err)
        except Exception as exc:  # a failure is the waiting fixture's to report
            self.result = subprocess.CompletedProcess([self.name], 1, "", f"{type(exc).__name__}: {exc}")
        finally:
            self.ended = time.perf_counter()
            self.done.set()


class Prefetcher:
    """The session's background jobs, run in order by one daemon thread."""

    def __init__(self, root: Path):
        self.root = root
        self.jobs: dict[str, Job] = {}
        self.began = time.perf_counter()
        self._lock = threading.Lock()
        self._closed = False

    def start(self, jobs: list[Job]) -> None:
        global _session_env
        _session_env = dict(os.environ)  # as the session set it up, before any test changes it (monkeypatch)
        for job in jobs:
            job.folder = self.root / job.name
            job.folder.mkdir(parents=True, exist_ok=True)
            self.jobs[job.name] = job
        threading.Thread(target=self._run_all, args=(jobs,), name="prefetch", daemon=True).start()

    def _claim(self, job: Job) -> bool:
        with self._lock:
            if job.claimed or self._closed:
                return False
            job.claimed = True
            return True

    def _run_all(self, jobs: list[Job]) -> None:
        for job in jobs:
            if self._claim(job):
                job.run()

    def close(self) -> None:
        """The session ends: start no job, and end the one running (a session stopped early by -x)."""
        with self._lock:
            self._closed = True
        for job in self.jobs.values():
            if job.proc is not None and job.proc.poll() is None:
                job.proc.kill()

    def wait(self, job: Job, folder: Path) -> tuple[subprocess.CompletedProcess, Path]:
        """The job's result and folder: the background run's, else (not started in this session) run now."""
        known = self.jobs.get(job.name)
        if known is None:
            job.folder = folder
            job.claimed = True
            job.run()
            known = job
        elif self._claim(known):  # queued behind others: run it here, now
            known.run()
        asked = time.perf_counter()
        known.done.wait()
        known.waited += time.perf_counter() - asked
        assert known.result is not None and known.folder is not None
        return known.result, known.folder


    def report(self) -> list[str]:
        """One line per job: when it ran (seconds from the session's start) and how long tests waited for it."""
        lines = []
        for job in self.jobs.values():
            if job.started is None or job.ended is None:
                lines.append(f"{job.name}: not run")
                continue
            lines.append(f"{job.name}: {job.started - self.began:.0f}-{job.ended - self.began:.0f} s "
                         f"({job.ended - job.started:.0f} s), tests waited {job.waited:.0f} s")
        return lines


#: the environment when the jobs started: a job starts while some test runs, and must not get what that test set
#: for itself (TMPDIR, TUI_EVAL_IMPORT_TIMEOUT_S=1)
_session_env: dict[str, str] | None = None


def session_env() -> dict[str, str]:
    """The environment a job starts with: the session's (`_session_env`)."""
    return dict(os.environ if _session_env is None else _session_env)


def plain_env(**extra: str) -> dict[str, str]:
    """The session's environment without PYTHONPATH (a user's shell), plus `extra`."""
    return {**{k: v for k, v in session_env().items() if k != "PYTHONPATH"}, **extra}
