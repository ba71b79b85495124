"""Checkpoints users really have: a Tune experiment naming the user's classes, envs registered with
`tune.register_env`, an evaluation config of their own, a module that fails, pixel observations."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from tests.support.bad_input import assert_one_line_error
from tests.support.jobs import USER, USER_RUNS
from tests.support.user_checkpoints import MODULE, user_checkpoints
from tui_eval.log.store import RunLog


@pytest.fixture(scope="module")
def user(prefetcher, tmp_path_factory):
    proc, folder = prefetcher.wait(USER, tmp_path_factory.mktemp("user"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return user_checkpoints(folder)


@pytest.fixture
def run(user, prefetcher, tmp_path):
    """`run(name)`: the CompletedProcess of the user run `name` (tests/support/user_runs.py: the CLI from the
    folder a user runs it from, with nothing of theirs on the import path but what the run is told) and the
    folder its outputs went to. Run in the background while earlier tests ran, or now."""

    def result(name: str):
        (tmp_path / name).mkdir()
        return prefetcher.wait(USER_RUNS[name], tmp_path / name)

    return result


def _by_path(summary) -> dict[str, dict[int, tuple]]:
    runs: dict[str, dict[int, tuple]] = defaultdict(dict)
    for e in summary["episodes"]:
        runs[e["path"]][e["seed"]] = (e["return"], e["length"], e["invalid"])
    return runs


def test_tune_experiment_runs_both_paths_with_import(run):
    proc, tmp_path = run("tune_import")  # --import MODULE_FILE --episodes 6 --explore evaluate=off --json s.json
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "using the newest of 1 checkpoint(s)" in proc.stderr
    assert "ray.tune.register_env('UserCartPole-v0', my_rl_project.make_cartpole)" in proc.stderr
    runs = _by_path(json.loads((tmp_path / "s.json").read_text()))
    assert len(runs["evaluate"]) == len(runs["connectors"]) == 6
    assert runs["evaluate"] == runs["connectors"]  # explore off on both: the same episodes, seed by seed
    assert all(length <= 200 for _, length, _ in runs["evaluate"].values())  # the creator saw max_steps


def test_tune_experiment_without_the_users_module_names_it(run):
    proc, _ = run("tune_without_module")  # the experiment alone, from an empty folder
    assert_one_line_error(proc, f"module {MODULE!r} is not importable", f"--import {MODULE}")
    assert "corrupt" not in proc.stderr


def test_the_users_folder_is_importable_like_python_m(run):
    proc, _ = run("from_the_users_folder")  # no --import, from the user's folder
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_import_of_a_missing_module_is_one_line(run):
    proc, _ = run("missing_import")  # --import no_such_module_here
    assert_one_line_error(proc, "--import no_such_module_here", "no module named")


def test_evaluate_runs_the_evaluation_configs_time_limit(user, run):
    """The checkpoint's own algo.evaluate() runs 100-step episodes (evaluation_config); so does the
    evaluate path, while connectors runs the training env (200 steps): never 'equivalent'."""
    from ray.rllib.algorithms.algorithm import Algorithm

    algo = Algorithm.from_checkpoint(str(user.eval_time_limit))
    try:
        own = algo.evaluate()["env_runners"]
    finally:
        algo.stop()
    assert own["episode_len_min"] == own["episode_len_max"] == 100

    proc, tmp_path = run("eval_time_limit")  # --episodes 4 --explore evaluate=off --json s.json
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "evaluation_config differs from the training env" in proc.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    runs = _by_path(summary)
    assert {length for _, length, _ in runs["evaluate"].values()} == {100}
    assert {length for _, length, _ in runs["connectors"].values()} == {200}
    assert summary["comparison"]["verdict"] != "equivalent"


def test_a_module_that_raises_is_a_failed_path_not_invalid_worlds(run):
    proc, tmp_path = run("strict_module")  # --import MODULE_FILE --episodes 3 --json s.json --log run.sqlite
    assert proc.returncode == 4, proc.stderr[-3000:]
    failed = [line for line in proc.stderr.splitlines() if "failed and was given up" in line]
    assert len(failed) == 2, proc.stderr[-3000:]
    assert all("observation outside the range this module accepts" in line for line in failed)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["status"] == "failed"
    assert all(p["invalid"] == 0 for p in summary["paths"].values())
    assert not any(e["invalid"] for e in summary["episodes"])
    meta = RunLog(tmp_path / "run.sqlite", readonly=True).meta()
    assert any("Traceback" in e["details"] for e in meta["path_errors"])


def test_pixels_behind_a_tune_registered_float_wrapper_run_on_both_paths(run):
    proc, tmp_path = run("float_carracing")  # from the user's folder: --import MODULE --episodes 2 --json, --log
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = _by_path(json.loads((tmp_path / "s.json").read_text()))
    assert len(runs["connectors"]) == 2 and runs["evaluate"] == runs["connectors"]
    descriptions = RunLog(tmp_path / "run.sqlite", readonly=True).meta()["descriptions"]
    assert "stock pipelines fused" in descriptions["connectors"], descriptions


def test_pixels_on_the_raw_uint8_env_are_refused_up_front(run):
    proc, _ = run("raw_uint8")  # --env CarRacing-v3 --env-config '{"continuous": false}'
    assert_one_line_error(proc, "trained on observations Box(0.0, 1.0, (96, 96, 3), float32)", "uint8")
