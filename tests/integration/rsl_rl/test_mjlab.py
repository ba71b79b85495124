"""mjlab run folders as mjlab's own `train` writes them (tests/support/mjlab_run.py): recognised, the task checked,
runner / onnx (mjlab's `<run>.onnx`) / jit identical world by world, termination and reward terms recorded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("mjlab", reason="the mjlab extra is not installed: pip install -e '.[mjlab]'")

from tests.support.bad_input import assert_one_line_error, in_process  # noqa: E402
from tests.support.cli_jobs import result_of  # noqa: E402
from tests.support.mjlab_jobs import IN_ONE_PROCESS, SIM_TO_SIM, WORLD_BY_WORLD  # noqa: E402

TASK = "Mjlab-Cartpole-Balance"
SHORT = json.dumps({"episode_length_s": 1.0})  # 20 steps: the tests are about pairing, not balancing


def run(prefetcher, job, folder: Path):
    """A headless run of the task's 20-step episodes on 8 worlds (a background job: tests/support/mjlab_jobs.py):
    its CompletedProcess, summary and log."""
    proc, out = result_of(prefetcher, job, folder)
    assert proc.returncode == 0, proc.stderr[-3000:]  # no gate is asked for: a completed run exits 0
    return proc, json.loads((out / "summary.json").read_text()), out / "run.sqlite"


def by_seed(summary: dict, path: str) -> dict[int, dict]:
    return {e["seed"]: e for e in summary["episodes"] if e["path"] == path}


def test_a_run_folder_without_its_task_gets_one_line_naming_the_matching_tasks(mjlab_run_folder, capsys):
    proc = in_process(capsys, mjlab_run_folder, "--headless")
    assert_one_line_error(proc, "does not say which task", "Mjlab-Cartpole-Balance, Mjlab-Cartpole-Swingup")
    assert "Go1" not in proc.stderr  # only the tasks whose experiment is cartpole
    assert_one_line_error(in_process(capsys, mjlab_run_folder, "--env", "Mjlab-Cartpole-Nope", "--headless"),
                          "is not a registered mjlab task")
    assert_one_line_error(in_process(capsys, mjlab_run_folder, "--env", TASK, "--env-config", '{"no_such_field": 1}',
                                     "--headless", "--episodes", "8", "--in-process", "--paths", "runner"),
                          "no_such_field", "episode_length_s")  # the fields there are


def test_runner_and_the_deployed_onnx_play_the_same_episodes_world_by_world(mjlab_run_folder, prefetcher, tmp_path):
    proc, summary, log = run(prefetcher, WORLD_BY_WORLD, tmp_path / "job")  # 24 seeds
    assert summary["kind"] == "mjlab"
    assert list(summary["paths"]) == ["runner", "onnx"]  # the run's own <run>.onnx is there: the default pair
    assert f"{mjlab_run_folder.name}.onnx (mjlab's ONNX export" in proc.stderr
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
    assert "verdict: IDENTICAL on 24/24 seeds — runner vs onnx, both deterministic" in proc.stdout
    assert summary["comparison"]["per_seed"] == "identical"


def rendered(content) -> str:
    """A Rich renderable (a Static's content) as plain text at 120 columns."""
    import io

    from rich.console import Console

    console = Console(width=120, file=io.StringIO(), record=True)
    console.print(content)
    return console.export_text()


@pytest.fixture(scope="module")
def in_one_process(mjlab_run_folder, prefetcher, tmp_path_factory):
    return run(prefetcher, IN_ONE_PROCESS, tmp_path_factory.mktemp("in_process"))  # --in-process --paths runner,jit


def test_paths_in_one_process_take_turns_and_episodes_record_their_terms(in_one_process):
    """MuJoCo-Warp crashes when two threads step it at once: in one process the paths' steps take turns. Every
    episode keeps the term that ended it and its reward terms, in --json and in the log."""
    proc, summary, log = in_one_process
    assert "every path a thread of this process" in proc.stderr
    runner, jit = by_seed(summary, "runner"), by_seed(summary, "jit")
    assert len(runner) == len(jit) == 24
    for episode in runner.values():
        assert episode["termination"] == "time_out" and episode["length"] == 20
        assert episode["success"] is True  # ran to its time limit
        assert list(episode["reward_terms"]) == ["smooth_reward"]
        assert sum(episode["reward_terms"].values()) == pytest.approx(episode["return"], rel=1e-5)
    path = summary["paths"]["runner"]
    assert path["terminations"] == {"time_out": 24}
    paired = summary["reward_terms"]  # the two paths' terms, paired by seed
    assert (paired["a"], paired["b"], paired["pairs"]) == ("runner", "jit", 24)
    assert [t["term"] for t in paired["terms"]] == ["smooth_reward"] and paired["terms"][0]["diff"] == 0.0
    mean = sum(e["return"] for e in runner.values()) / 24
    assert path["reward_terms"]["smooth_reward"]["mean"] == pytest.approx(mean, rel=1e-5)
    assert "ended by" in proc.stdout and "time_out 100%" in proc.stdout and "smooth_reward" in proc.stdout
    with sqlite3.connect(log) as db:  # kept in the log: a run read back later has them
        rows = db.execute("SELECT termination, reward_terms FROM episodes WHERE path = 'jit'").fetchall()
    assert len(rows) == 24 and all(t == "time_out" and "smooth_reward" in terms for t, terms in rows)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_app_shows_what_ended_the_episodes_and_which_reward_term_moved(in_one_process, size):
    from tests.support.ui import plain, wait_for
    from tui_eval.ui.app import EvalApp
    from tui_eval.ui.widgets import ComparisonTable, VerdictBar
    from tui_eval.ui.widgets.terms_screen import TermsScreen

    log = in_one_process[2]
    app = EvalApp(log_path=log)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.summaries.get("jit", {}).get("episodes") == 24, what="the log read")
        assert plain(app.query_one(VerdictBar)).startswith(" IDENTICAL  on 24/24 seeds ")  # said first, plainly
        table = plain(app.query_one(ComparisonTable))
        assert ("time_out 100%" in table) == (size[0] >= 120)  # the first column to go when the terminal is narrow
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, TermsScreen), what="the terms screen")
        text = " ".join(rendered(w.content) for w in app.screen.query("Static"))
        assert "time_out" in text and "100% (24)" in text
        assert "smooth_reward" in text and "jit − runner" in text and "24 paired seeds" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TermsScreen), what="closed")
        await pilot.press("q")


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


class _Seeds:
    cancelled, heartbeat = False, None

    def __init__(self, seeds):
        self._seeds = iter(seeds)

    def take(self):
        seed = next(self._seeds, None)
        return None if seed is None else (seed, 0)


def _cartpole_with_a_nan_guard(num_envs: int, device: str, seed: int):
    """mjlab's cartpole with mjlab's own NaN guard term added, as a task that wants one declares it."""
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.envs.mdp.terminations import nan_detection
    from mjlab.managers.termination_manager import TerminationTermCfg
    from mjlab.rl import RslRlVecEnvWrapper
    from mjlab.tasks.registry import load_env_cfg

    cfg = load_env_cfg(TASK)
    cfg.scene.num_envs, cfg.seed = num_envs, seed
    cfg.terminations["nan_term"] = TerminationTermCfg(func=nan_detection)
    return RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg=cfg, device=device))


def test_a_world_the_nan_guard_ends_is_invalid_and_the_others_run_on():
    import torch

    from tui_eval.integrations.rsl_rl.mjlab.tasks import registered
    from tui_eval.integrations.rsl_rl.paths.factory_env import FactoryVecEnv

    registered()  # mjlab's tasks, quietly
    env = FactoryVecEnv(_cartpole_with_a_nan_guard, "cartpole+nan", {"num_envs": 4, "device": "cpu", "seed": 100})
    try:
        assert env.terms is not None and env.terms.nan_terms == {"nan_term"}
        env.begin(_Seeds(range(100, 104)))
        env.inner.unwrapped.sim.data.qpos[1] = float("nan")  # world 1's simulation blows up
        env.step(torch.zeros(4, 1))
        (end,) = env.finished
        assert end.world == 1 and end.seed == 101 and end.termination == "nan_term"
        assert end.reason is not None and "NaN guard" in end.reason and end.success is False
        assert list(env.live) == [True, False, True, True]  # the other worlds' episodes go on
    finally:
        env.close()


def test_sim_to_sim_on_another_mjlab_task(mjlab_run_folder, prefetcher, tmp_path, capsys):
    """`--vs-env TASK`: the same policy on another mjlab task (here: balance-trained, asked to swing up)."""
    assert_one_line_error(in_process(capsys, mjlab_run_folder, "--env", TASK, "--vs-env", "Mjlab-Cartpole-Upside",
                                     "--headless"), "--vs-env 'Mjlab-Cartpole-Upside' is not a registered mjlab task")
    # one batch of 8 worlds each way: the pole hanging down costs every episode, no spread to average out
    proc, summary, _ = run(prefetcher, SIM_TO_SIM, tmp_path / "job")  # --vs-env Mjlab-Cartpole-Swingup, 8 seeds
    assert list(summary["paths"]) == ["onnx", "onnx@vs-env"]
    assert "Mjlab-Cartpole-Swingup" in proc.stderr
    home, away = summary["paths"]["onnx"], summary["paths"]["onnx@vs-env"]
    assert home["episodes"] == away["episodes"] == 8
    assert away["mean"] < home["mean"]  # the pole starts down: a balancing policy earns less


def test_the_frame_view_says_a_batched_simulator_is_not_rendered(mjlab_run_folder, tmp_path):
    """The frame view shows why there is no picture, for the path in the run's process and the one in its own."""
    from tests.support.engines import run_to_end

    engine, records = run_to_end(mjlab_run_folder, "--env", TASK, "--env-config", SHORT, "--episodes", "8",
                                 "--num-envs", "8", log=tmp_path / "run.sqlite", own_processes=True)
    try:
        assert len(records) == 16
        for name in ("runner", "onnx"):
            assert "a batched simulator's worlds (--vecenv, mjlab) are not rendered" in engine.frames.tap(name).problem
    finally:
        engine.close()
