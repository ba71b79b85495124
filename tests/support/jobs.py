"""The session's slow preparations, as background jobs (tests/support/prefetch.py), each with the test
files that need it: a job starts only when one of them is collected."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from tests.support.cli_jobs import (
    DEFAULT_SUMMARY,
    PANDAREACH,
    RECORD_GIF,
    RECORD_WITHOUT_FRAMES,
    REPORT_RUN,
    UNTIL_DECIDED,
    cli_job,
    finished,
)
from tests.support.common import ROOT, SUPPORT
from tests.support.mjlab_jobs import MJLAB_RUN
from tests.support.mjlab_jobs import WANTED_BY as MJLAB_WANTED_BY
from tests.support.prefetch import Job, plain_env, session_env
from tests.support.sweep_runs import BEST_RSL
from tests.support.user_checkpoints import PROJECT_SOURCE
from tests.support.user_runs import user_runs


def _tool(name: str) -> str:
    """The tool installed next to this interpreter (the venv's), else the one on PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def _mypy(folder: Path):
    # no cache: writing one (torch and ray included) costs several times a run without (measured)
    argv = [_tool("mypy"), "--no-incremental", "--cache-dir", os.devnull]
    env = session_env()
    return argv, ROOT, {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))}


def _doctor(folder: Path):
    return [sys.executable, str(SUPPORT / "doctor_checkpoints.py"), str(folder)], folder, plain_env()


def _user(folder: Path):
    project = folder / "project"
    if not project.exists():
        shutil.copytree(PROJECT_SOURCE, project)
    return [sys.executable, "train_user_checkpoints.py", str(folder / "checkpoints")], project, plain_env()


def _zoo(folder: Path):
    # "all", not the names imported: importing RLlib in this (background) thread while a test imports it
    # can deadlock the two imports.
    # The multi-agent policy IDs are a set: the order the modules are built in (and so which one gets which
    # initial weights) follows the hash seed. Fixed, the zoo is the same every session; with this one the
    # LSTM modules' actions depend on their state, which the doctor's carried-over-state test needs to see.
    return [sys.executable, "-m", "tests.support.zoo_checkpoints", str(folder), "all"], \
        ROOT, {**session_env(), "PYTHONHASHSEED": "1"}


def _connectors(folder: Path):
    return [sys.executable, "-m", "tests.support.zoo_connectors", str(folder)], ROOT, session_env()


def _report_image(folder: Path):
    """docs/make_report_image.py as the README's picture is made, on a short demo run, into the job's folder."""
    return [sys.executable, str(ROOT / "docs" / "make_report_image.py"), str(folder / "report.png"), "--episodes",
            "8"], folder, plain_env()


def _sweep_runs(folder: Path):
    return [sys.executable, "-m", "tests.support.sweep_runs", str(folder)], ROOT, plain_env()


def _examples(folder: Path):
    return [sys.executable, "-m", "tests.support.example_checkpoints", str(folder)], ROOT, plain_env()


MYPY = Job("mypy", _mypy)
EXAMPLES = Job("example_checkpoints", _examples)
SWEEP_RUNS = Job("sweep_runs", _sweep_runs)
#: two of the sweep runs' rsl_rl checkpoints swept with `--workers 2` (a local Ray in the CLI's process)
SWEEP_WORKERS = cli_job("sweep_workers", lambda f: (
    ["sweep", finished(SWEEP_RUNS) / "rsl" / BEST_RSL, finished(SWEEP_RUNS) / "rsl" / "model_10.pt", "--episodes",
     "400", "--headless", "--workers", "2", "--json", f / "workers.json"], ROOT))
REPORT_IMAGE = Job("report_image", _report_image)
DOCTOR = Job("doctor_checkpoints", _doctor)
USER = Job("user_checkpoints", _user)
ZOO = Job("zoo_checkpoints", _zoo)
CONNECTORS = Job("zoo_connectors", _connectors)
USER_RUNS = user_runs(trained_by=USER)
_USER_TESTS = "tests/integration/rllib/test_user_checkpoints.py"

#: in the order they run; with the test ids (or their prefixes: files) whose collection starts them
WANTED_BY: list[tuple[Job, tuple[str, ...]]] = [
    (MYPY, ("tests/health/test_code_health.py::test_mypy_is_clean",)),
    (REPORT_RUN, ("tests/integration/report/test_report.py",)),
    (REPORT_IMAGE, ("tests/integration/report/test_report.py::test_the_readmes_report_image",)),
    # runs on the demo, for tests in the middle of the session (before the checkpoints the later ones need)
    (MJLAB_RUN, ("tests/integration/rsl_rl/test_mjlab",
                 "tests/e2e/test_broken_checkpoint_files.py::test_a_broken_file_of_an_mjlab_run")),
    (RECORD_GIF, ("tests/integration/frames/test_frames.py::test_record_writes_a_gif",)),
    (RECORD_WITHOUT_FRAMES, ("tests/integration/frames/test_frames.py::test_record_of_an_env_without_frames",)),
    (PANDAREACH, ("tests/integration/rsl_rl/test_rsl_pandareach.py::test_short_run_reports_success",)),
    (DEFAULT_SUMMARY, ("tests/e2e/test_headless_and_log.py::test_default_run_summary_json",)),
    (UNTIL_DECIDED, ("tests/e2e/test_decide_runs.py::test_until_decided_ends_a_real_run_early",)),
    # the mjlab tests' runs on the trained run folder: those tests come after the e2e ones (tests/conftest.py)
    *[(job, tuple(test for other, test in MJLAB_WANTED_BY if other is job))
      for i, (job, _) in enumerate(MJLAB_WANTED_BY) if all(other is not job for other, _ in MJLAB_WANTED_BY[:i])],
    (EXAMPLES, ("tests/integration/rllib/test_seeds_are_promises.py",
                "tests/integration/doctor/test_doctor_examples.py")),
    (DOCTOR, ("tests/integration/doctor/test_doctor.py",)),
    (SWEEP_RUNS, ("tests/integration/sweep/",)),
    (USER, (_USER_TESTS,)),
    (ZOO, ("tests/integration/rllib/test_zoo.py", "tests/integration/rllib/test_multi_agent")),
    (CONNECTORS, ("tests/integration/rllib/test_rllib_connector_matrix.py",
                  "tests/integration/rllib/test_rllib_batched_e2m.py",
                  "tests/integration/rllib/test_rllib_fused_m2e.py::test_fused_module_to_env_equals_the_pipeline_on_st",
                  "tests/integration/doctor/test_doctor_probes.py::test_an_rllib_lstm")),
    # after every training job: the user's runs need only theirs, and their tests come last
    *[(job, (_USER_TESTS,)) for job in USER_RUNS.values()],
    (SWEEP_WORKERS, ("tests/integration/sweep/test_sweep.py::test_workers_spread",)),
]
