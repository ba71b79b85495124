"""The mjlab tests' CLI runs as background jobs (tests/support/prefetch.py), each on the run folder that the
`mjlab_run` job trains (tests/support/mjlab_run.py): the same `python -m tui_eval.cli` a test would start with
`tests.support.common.cli`, from the same folder and with the same environment, started once the run is trained
and while earlier tests use the other core. A job whose run needs a planted export first copies the run folder with
the changed metadata into its own folder (`with_metadata`, in the job's process), then becomes the CLI:

    python -m tests.support.mjlab_jobs RUN_FOLDER JOB_FOLDER [FIELD=TEXT ...] -- CLI_ARGS ({run}: the folder run)
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.cli_jobs import finished
from tests.support.common import ROOT
from tests.support.prefetch import Job, plain_env

TASK, OTHER = "Mjlab-Cartpole-Balance", "Mjlab-Cartpole-Swingup"
SHORT = json.dumps({"episode_length_s": 1.0})  # 20 steps: most tests are about pairing, not balancing
LONG_ENOUGH = json.dumps({"episode_length_s": 6.0})  # 120 steps: runner and onnx part (20 steps do not)
RUN = "{run}"  # in a job's CLI arguments: the run folder (or its planted copy)


def _train(folder: Path):
    return [sys.executable, "-m", "tests.support.mjlab_run", str(folder)], ROOT, plain_env()


MJLAB_RUN = Job("mjlab_run", _train)


def trained_run() -> Path:
    """The run folder the `mjlab_run` job trained (waited for: a job of this module starts after it)."""
    finished(MJLAB_RUN)
    assert MJLAB_RUN.result is not None
    return Path(MJLAB_RUN.result.stdout.strip().splitlines()[-1])


def mjlab_job(name: str, arguments: Callable[[Path], list], *, plant: dict[str, str] | None = None,
              timeout: float = 300) -> Job:
    """A CLI run on the trained run folder (`{run}` in `arguments(job_folder)`), its export planted with `plant`."""
    def command(folder: Path):
        changes = [f"{field}={text}" for field, text in (plant or {}).items()]
        argv = [sys.executable, "-m", "tests.support.mjlab_jobs", str(trained_run()), str(folder), *changes, "--",
                *map(str, arguments(folder))]
        return argv, ROOT, dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")

    return Job(name, command, timeout=timeout)


def _run(*extra, episodes: int = 24, env_config: str = SHORT) -> Callable[[Path], list]:
    """A headless run of the task with a summary and a log in the job's folder."""
    return lambda f: [RUN, "--env", TASK, "--env-config", env_config, "--headless", "--episodes", episodes,
                      "--num-envs", "8", "--json", f / "summary.json", "--log", f / "run.sqlite", *extra]


STIFFER = {"joint_stiffness": "5.000"}
SAME_POLICY = mjlab_job("mjlab_same_policy", _run(episodes=8, env_config=LONG_ENOUGH), timeout=600)
WORLD_BY_WORLD = mjlab_job("mjlab_world_by_world", _run())
IN_ONE_PROCESS = mjlab_job("mjlab_in_one_process", _run("--in-process", "--paths", "runner,jit"))
SIM_TO_SIM = mjlab_job("mjlab_sim_to_sim", _run("--vs-env", OTHER, "--vs-env-config", SHORT, episodes=8))
#: a faithful export's deploy path beside its onnx path, the deploy path also on another task
DEPLOY = mjlab_job("mjlab_deploy", _run("--paths", "deploy,onnx", "--vs-env", OTHER, "--vs-env-config", SHORT,
                                        episodes=8))
UNREADABLE = mjlab_job("mjlab_unreadable_metadata", _run(episodes=8), plant={"joint_damping": "soft,stiff"})
PLANTED = mjlab_job("mjlab_planted_stiffness", _run("--paths", "runner,deploy", episodes=32), plant=STIFFER,
                    timeout=600)
DOCTOR = mjlab_job("mjlab_doctor_planted_stiffness", lambda f: [
    "diagnose", RUN, "--env", TASK, "--env-config", SHORT, "--num-envs", "8", "--seed", "1000000000"], plant=STIFFER)
WRONG_LENGTH = mjlab_job("mjlab_wrong_length", lambda f: [
    RUN, "--env", TASK, "--env-config", SHORT, "--headless", "--episodes", "2", "--num-envs", "2", "--paths",
    "onnx,deploy", "--log", f / "run.sqlite"], plant={"joint_stiffness": "5.000,5.000", "joint_damping": "0.000,0.000"})

#: the jobs, each with the test that reads it (tests/support/jobs.py starts them after the training)
WANTED_BY: list[tuple[Job, str]] = [
    (SAME_POLICY, "tests/integration/rsl_rl/test_mjlab_same_policy.py::test_runner_and_its_onnx_export_part"),
    (DEPLOY, "tests/integration/rsl_rl/test_mjlab_contract.py::test_a_faithful_export_keeps_its_contract"),
    (DEPLOY, "tests/integration/rsl_rl/test_mjlab_deploy.py::test_the_deploy_path_plays_on_another_task"),
    (WORLD_BY_WORLD, "tests/integration/rsl_rl/test_mjlab.py::test_runner_and_the_deployed_onnx_play_the_same"),
    (IN_ONE_PROCESS, "tests/integration/rsl_rl/test_mjlab.py::test_paths_in_one_process_take_turns"),
    (SIM_TO_SIM, "tests/integration/rsl_rl/test_mjlab.py::test_sim_to_sim_on_another_mjlab_task"),
    (UNREADABLE, "tests/integration/rsl_rl/test_mjlab_contract.py::test_metadata_that_cannot_be_read"),
    (PLANTED, "tests/integration/rsl_rl/test_mjlab_contract.py::test_a_planted_stiffness_costs_returns"),
    (DOCTOR, "tests/integration/rsl_rl/test_mjlab_contract.py::test_the_doctor_puts_a_planted_stiffness_first"),
    (WRONG_LENGTH, "tests/integration/rsl_rl/test_mjlab_deploy.py::test_a_field_of_the_wrong_length"),
]


def main(argv: list[str]) -> None:
    """Plant the export's metadata in a copy of the run folder (if asked), then become the CLI on it."""
    split = argv.index("--")
    run, folder, changes = Path(argv[0]), Path(argv[1]), argv[2:split]
    if changes:
        from tests.support.mjlab_run import with_metadata

        run = with_metadata(run, folder, **dict(change.split("=", 1) for change in changes))
    args = [str(run) if arg == RUN else arg for arg in argv[split + 1:]]
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "tui_eval.cli", *args])


if __name__ == "__main__":
    main(sys.argv[1:])
