"""The CLI runs of tests/integration/rllib/test_user_checkpoints.py, as background jobs (tests/support/cli_jobs.py)
queued behind the training jobs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.cli_jobs import cli_job
from tests.support.prefetch import Job
from tests.support.user_checkpoints import MODULE, UserCheckpoints, user_checkpoints

#: (user's checkpoints, the job's folder) -> (the CLI's arguments, the folder it runs from)
Arguments = Callable[[UserCheckpoints, Path], tuple[list, Path]]


def user_run(name: str, arguments: Arguments, *, trained_by: Job, timeout: float = 300) -> Job:
    """A job running the CLI on the checkpoints `trained_by` made (a job earlier in the queue, or waited for
    by the test's fixture before it asks for this one)."""

    def on_checkpoints(folder: Path):
        assert trained_by.folder is not None, f"{name} needs {trained_by.name} first"
        return arguments(user_checkpoints(trained_by.folder), folder)

    return cli_job(f"user_run_{name}", on_checkpoints, timeout=timeout)


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
