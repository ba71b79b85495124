"""CLI runs as background jobs (tests/support/prefetch.py): the same subprocess a test would start with
`tests.support.common.cli` (`python -m tui_eval.cli`, this checkout on PYTHONPATH, from the same folder), run
while earlier tests use the other core. The test asserts on its CompletedProcess and on the files it wrote into
the job's folder, as it would on its own run; a test that comes first runs it itself (Prefetcher.wait)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.common import ASSETS, CARTPOLE, ROOT
from tests.support.prefetch import Job, session_env

#: the job's folder -> (the CLI's arguments, the folder it runs from)
Arguments = Callable[[Path], tuple[list, Path]]


def cli_job(name: str, arguments: Arguments, *, timeout: float = 300) -> Job:
    def command(folder: Path):
        args, cwd = arguments(folder)
        return [sys.executable, "-m", "tui_eval.cli", *map(str, args)], cwd, dict(session_env(), PYTHONPATH=str(ROOT))

    return Job(name, command, timeout=timeout)


def finished(job: Job) -> Path:
    """The folder of `job`, an earlier job of the lane (or of the fixture that ran it), once it succeeded: for a job
    whose run reads what that one wrote."""
    if not job.done.wait(job.timeout + 60) or job.result is None or job.folder is None:
        raise RuntimeError(f"the {job.name} job did not run")
    if job.result.returncode != 0:
        raise RuntimeError(f"the {job.name} job failed: {job.result.stderr[-2000:]}")
    return job.folder


def result_of(prefetcher, job: Job, folder: Path):
    """The job's CompletedProcess and the folder its files are in (`folder`, made here, when the test runs it)."""
    folder.mkdir(parents=True, exist_ok=True)
    return prefetcher.wait(job, folder)


#: e2e runs on the bundled demo: they need nothing trained
DEFAULT_SUMMARY = cli_job("run_default_summary", lambda f: (
    [CARTPOLE, "--headless", "--episodes", "64", "--num-envs", "8", "--json", f / "s.json", "--log", f / "run.sqlite",
     "--fail-on-differ"], f))
UNTIL_DECIDED = cli_job("run_until_decided", lambda f: (
    [CARTPOLE, "--headless", "--vs", CARTPOLE, "--explore", "connectors=on", "--episodes", "400", "--num-envs", "8",
     "--until-decided", "--fail-if-worse", "20", "--json", f / "s.json", "--log", f / "run.sqlite"], f))
#: the report's run: the demo's defaults (evaluate samples, connectors does not), its picture drawn as it ends
REPORT_RUN = cli_job("run_report", lambda f: (
    [CARTPOLE, "--headless", "--episodes", "24", "--num-envs", "4", "--log", f / "run.sqlite", "--report",
     f / "end.html"], f))
RECORD_GIF = cli_job("run_record_gif", lambda f: (
    ["record", CARTPOLE, "--seed", "5", "--out", f / "clip.gif", "--paths", "connectors,vs", "--vs", CARTPOLE,
     "--stride", "1"], ROOT))
RECORD_WITHOUT_FRAMES = cli_job("run_record_without_frames", lambda f: (
    ["record", ASSETS / "rsl_pointgoal" / "model_39.pt", "--seed", "1", "--out", f / "x.gif"], ROOT))
PANDAREACH = cli_job("run_pandareach", lambda f: (
    ["demo", "pandareach", "--headless", "--episodes", "16", "--num-envs", "16", "--json", f / "summary.json"], f))
