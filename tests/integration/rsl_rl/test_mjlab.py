"""mjlab run folders as mjlab's own `train` writes them (tests/support/mjlab_run.py): recognised, the task checked,
runner / onnx (mjlab's `<run>.onnx`) / jit identical world by world, termination and reward terms recorded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("mjlab", reason="the mjlab extra is not installed: pip install -e '.[mjlab]'")

from tests.support.common import cli  # noqa: E402
from tests.support.jobs import MJLAB_RUN  # noqa: E402

TASK = "Mjlab-Cartpole-Balance"
SHORT = json.dumps({"episode_length_s": 1.0})  # 20 steps: the tests are about pairing, not balancing
QUIET = {"CUDA_VISIBLE_DEVICES": ""}


@pytest.fixture(scope="module")
def run_folder(prefetcher, tmp_path_factory) -> Path:
    proc, out = prefetcher.wait(MJLAB_RUN, tmp_path_factory.mktemp("mjlab"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip().splitlines()[-1])


def run(folder: Path, out: Path, *extra: str):
    json_path, log = out / "summary.json", out / "run.sqlite"
    proc = cli(folder, "--env", TASK, "--env-config", SHORT, "--headless", "--episodes", "24", "--num-envs", "8",
               "--json", json_path, "--log", log, *extra, env=QUIET, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return proc, json.loads(json_path.read_text()), log


def by_seed(summary: dict, path: str) -> dict[int, dict]:
    return {e["seed"]: e for e in summary["episodes"] if e["path"] == path}


def test_a_run_folder_without_its_task_gets_one_line_naming_the_matching_tasks(run_folder):
    proc = cli(run_folder, "--headless", env=QUIET)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "does not say which task" in lines[0]
    assert "Mjlab-Cartpole-Balance, Mjlab-Cartpole-Swingup" in lines[0]  # the tasks whose experiment is cartpole
    assert "Go1" not in lines[0]

    proc = cli(run_folder, "--env", "Mjlab-Cartpole-Nope", "--headless", env=QUIET)
    assert proc.returncode == 2 and "is not a registered mjlab task" in proc.stderr
    proc = cli(run_folder, "--env", TASK, "--env-config", '{"no_such_field": 1}', "--headless", "--episodes", "8",
               env=QUIET)
    assert proc.returncode == 2 and "no_such_field" in proc.stderr and "Traceback" not in proc.stderr


def test_runner_and_the_deployed_onnx_play_the_same_episodes_world_by_world(run_folder, tmp_path):
    proc, summary, log = run(run_folder, tmp_path)
    assert summary["kind"] == "mjlab"
    assert list(summary["paths"]) == ["runner", "onnx"]  # the run's own <run>.onnx is there: the default pair
    assert f"{run_folder.name}.onnx (mjlab's ONNX export" in proc.stderr
    assert "onnx metadata: run_path: local; joint_names: slider,hinge" in proc.stderr
    assert "MjlabOnPolicyRunner.load(model_2.pt)" in proc.stderr
    assert "one row per call (the export fixes batch size 1)" in proc.stderr
    runner, onnx = by_seed(summary, "runner"), by_seed(summary, "onnx")
    assert len(runner) == len(onnx) == 24
    for seed, a in runner.items():
        b = onnx[seed]
        assert (a["world"], a["batch_seed"]) == (b["world"], b["batch_seed"]) == (seed % 8, seed - seed % 8)
        assert (a["length"], a["termination"]) == (b["length"], b["termination"])
        # mjlab's export (torch.onnx, legacy exporter) on onnxruntime rounds its floats its own way: ~1e-8
        assert a["return"] == pytest.approx(b["return"], rel=1e-6)
        assert a["reward_terms"] == pytest.approx(b["reward_terms"], rel=1e-6)
    assert summary["comparison"]["identical_pairs"] == 24  # float noise is no difference between episodes
    assert "identical on 24/24 seeds" in proc.stdout


def test_episodes_record_what_ended_them_and_their_reward_terms(run_folder, tmp_path):
    _, summary, log = run(run_folder, tmp_path, "--paths", "runner,jit")
    runner, jit = by_seed(summary, "runner"), by_seed(summary, "jit")
    assert {(e["return"], e["length"]) for e in runner.values()} == {(e["return"], e["length"]) for e in jit.values()}
    for episode in runner.values():
        assert episode["termination"] == "time_out" and episode["length"] == 20
        assert episode["success"] is True  # ran to its time limit
        assert list(episode["reward_terms"]) == ["smooth_reward"]
        assert sum(episode["reward_terms"].values()) == pytest.approx(episode["return"], rel=1e-5)
    path = summary["paths"]["runner"]
    assert path["terminations"] == {"time_out": 24}
    mean = sum(e["return"] for e in runner.values()) / 24
    assert path["reward_terms"]["smooth_reward"]["mean"] == pytest.approx(mean, rel=1e-5)
    # kept in the log: a run read back later has them
    with sqlite3.connect(log) as db:
        rows = db.execute("SELECT termination, reward_terms FROM episodes WHERE path = 'runner'").fetchall()
    assert len(rows) == 24 and all(t == "time_out" and "smooth_reward" in terms for t, terms in rows)


def test_two_paths_in_one_process_take_turns_on_the_simulator(run_folder, tmp_path):
    """MuJoCo-Warp crashes when two threads step it at once: in one process the paths' steps take turns."""
    proc, summary, _ = run(run_folder, tmp_path, "--in-process", "--paths", "runner,jit")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "every path a thread of this process" in proc.stderr
    assert {name: p["episodes"] for name, p in summary["paths"].items()} == {"runner": 24, "jit": 24}
    assert all(e["termination"] == "time_out" for e in summary["episodes"])


def test_a_go1_env_is_built_as_mjlab_trains_it_and_names_its_terms():
    import torch

    from tui_eval.integrations.rsl_rl.mjlab.env import MjlabVecEnv

    env = MjlabVecEnv(task="Mjlab-Velocity-Flat-Unitree-Go1", env_config={}, agent_cfg={"clip_actions": None},
                      num_envs=2, device="cpu", seed=7, step_counter=0, success_key=None, step_timeout=None)
    try:
        assert env.num_actions == 12 and env.num_envs == 2
        obs = env.get_observations()
        assert obs["actor"].shape == (2, 48)
        for _ in range(3):
            obs, rew, dones, extras = env.step(torch.zeros(2, 12))
        assert torch.isfinite(rew).all() and torch.isfinite(obs["actor"]).all()
        terms = env.terms
        assert terms is not None
        assert {"time_out", "fell_over"} <= set(terms.termination_names)
        assert "time_out" in terms.time_outs and "fell_over" not in terms.time_outs
        assert "track_linear_velocity" in terms.reward_names
    finally:
        env.close()
