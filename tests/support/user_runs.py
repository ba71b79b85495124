"""The CLI runs of tests/integration/rllib/test_user_checkpoints.py, as background jobs (tests/support/prefetch.py)
queued behind the training jobs: each is the same subprocess the test would start (`python -m tui_eval.cli`,
this checkout on PYTHONPATH, from the same folder), run while the tests before it use the other core. The test
asserts on its CompletedProcess and on the files it wrote into the job's folder, as it would on its own run."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.common import ROOT
from tests.support.prefetch import Job
from tests.support.user_checkpoints import MODULE, UserCheckpoints, user_checkpoints

#: (user's checkpoints, the job's folder) -> (the CLI's arguments, the folder it runs from)
Arguments = Callable[[UserCheckpoints, Path], tuple[list, Path]]


def user_run(name: str, arguments: Arguments, *, trained_by: Job, timeout: float = 300) -> Job:
    """A job running the CLI on the checkpoints `trained_by` made (a job earlier in the queue, or waited for
    by the test's fixture before it asks for this one)."""

    def command(folder: Path):
        assert trained_by.folder is not None, f"{name} needs {trained_by.name} first"
        args, cwd = arguments(user_checkpoints(trained_by.folder), folder)
        return [sys.executable, "-m", "tui_eval.cli", *map(str, args)], cwd, dict(os.environ, PYTHONPATH=str(ROOT))

    return Job(f"user_run_{name}", command, timeout=timeout)


def user_runs(trained_by: Job) -> dict[str, Job]:
    """Every run of the file, by the name its test asks for."""
    off = ("--explore", "evaluate=off")
    runs: dict[str, Arguments] = {
        "tune_import": lambda u, f: ([u.experiment, "--import", u.module_file, "--headless", "--episodes", "6",
                                      *off, "--json", f / "s.json"], f),
        "tune_without_module": lambda u, f: ([u.experiment, "--headless", "--episodes", "2"], f),
        "from_the_users_folder": lambda u, f: ([u.experiment, "--headless", "--episodes", "2", "--log",
                                                "run.sqlite"], u.project),
        "missing_import": lambda u, f: ([u.experiment, "--import", "no_such_module_here", "--headless"], f),
        "eval_time_limit": lambda u, f: ([u.eval_time_limit, "--headless", "--episodes", "4", *off, "--json",
                                          f / "s.json"], f),
        "strict_module": lambda u, f: ([u.strict_module, "--import", u.module_file, "--headless", "--episodes", "3",
                                        *off, "--json", f / "s.json", "--log", f / "run.sqlite"], f),
        "float_carracing": lambda u, f: ([u.float_carracing, "--import", MODULE, "--headless", "--episodes", "2",
                                          *off, "--json", f / "s.json", "--log", f / "run.sqlite"], u.project),
        "raw_uint8": lambda u, f: ([u.float_carracing, "--env", "CarRacing-v3", "--env-config",
                                    '{"continuous": false}', "--headless"], f),
    }
    return {name: user_run(name, arguments, trained_by=trained_by, timeout=400 if "carracing" in name else 300)
            for name, arguments in runs.items()}
