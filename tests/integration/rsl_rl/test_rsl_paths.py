"""The rsl_rl paths on the bundled demo checkpoint: real runner, real export, real env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from tests.support.rsl import ListFeed, demo_checkpoint, run_path
from tui_eval.config.spec import RunSpec, SeedBlock
from tui_eval.errors import BadInput
from tui_eval.integrations.rsl_rl.kind import RslRlKind

SEEDS = list(range(5_000, 5_020))


@pytest.fixture(scope="module")
def kind():
    ckpt = demo_checkpoint()
    return RslRlKind(ckpt, RunSpec(checkpoint=str(ckpt), num_envs=6))


@pytest.fixture(scope="module")
def runner_and_jit(kind):
    paths = {name: kind.build_path(name, False) for name in ("runner", "jit")}
    yield paths
    for path in paths.values():
        path.close()


def by_seed(records):
    return {r.seed: (r.ret, r.success, r.length, r.invalid) for r in records}


def test_runner_and_jit_give_identical_episodes(runner_and_jit):
    results = {name: run_path(path, SEEDS) for name, path in runner_and_jit.items()}
    for name, records in results.items():
        assert sorted(r.seed for r in records) == SEEDS, name  # every seed once, idle worlds record nothing
        assert all(r.path == name and r.explore is False and not r.invalid for r in records)
    runner, jit = by_seed(results["runner"]), by_seed(results["jit"])
    assert runner == jit
    success = [s for _, s, _, _ in runner.values()]
    assert np.mean(success) > 0.5  # the demo policy reaches the goal


def test_returns_match_a_plain_gymnasium_loop(runner_and_jit):
    """Autoreset is right: no 0-reward dummy step, the episode's return is the env's own sum."""
    jit = runner_and_jit["jit"]
    records = by_seed(run_path(jit, SEEDS[:4]))
    env = gym.make("PointGoal-v0")
    for seed in SEEDS[:4]:
        obs, _ = env.reset(seed=seed)
        total, steps, done = 0.0, 0, False
        while not done:
            with torch.inference_mode():
                action = jit.module(torch.as_tensor(obs).unsqueeze(0))[0].numpy()
            obs, reward, terminated, truncated, info = env.step(action)
            total += float(np.float32(reward))
            steps += 1
            done = terminated or truncated
        ret, success, length, _ = records[seed]
        assert length == steps and success == info["is_success"]
        assert ret == pytest.approx(total, rel=1e-6)


def test_runner_explore_samples(kind):
    path = kind.build_path("runner", True)
    try:
        torch.manual_seed(0)
        records = run_path(path, SEEDS[:8])
    finally:
        path.close()
    assert len(records) == 8 and all(r.explore is True for r in records)
    with pytest.raises(BadInput, match="deterministic mean"):
        kind.build_path("jit", True)


def test_cancel_abandons_the_episodes_in_flight_and_takes_no_more_seeds(runner_and_jit):
    feed, records = ListFeed(range(10_000, 10_100), cancel_after=3), []
    runner_and_jit["runner"].run(feed, records.append)
    assert feed.taken == [10_000, 10_001, 10_002]  # none taken once cancelled
    assert len(records) < 3  # the episodes in flight are abandoned, not played to their end


def test_onnx_path_matches_runner(kind, runner_and_jit, tmp_path, monkeypatch):
    import onnxruntime  # noqa: F401  (part of the test extra: this test must run, not skip)
    monkeypatch.setenv("TUI_EVAL_CACHE", str(tmp_path))
    path = kind.build_path("onnx", False)
    try:
        assert str(tmp_path) in path.description and path.fixed_batch  # rsl_rl's export fixes batch size 1
        onnx = by_seed(run_path(path, SEEDS[:8]))
    finally:
        path.close()
    runner = by_seed(run_path(runner_and_jit["runner"], SEEDS[:8]))
    assert onnx.keys() == runner.keys()
    for seed in onnx:
        assert onnx[seed][1:] == runner[seed][1:]  # success, length, invalid
        assert onnx[seed][0] == pytest.approx(runner[seed][0], rel=1e-5)


def test_engine_runs_both_paths_into_the_log(kind, tmp_path):
    from tui_eval.engine.core import Engine
    from tui_eval.log.store import RunLog

    paths = [kind.build_path(name, False) for name in ("runner", "jit")]
    log = RunLog(tmp_path / "run.db")
    engine = Engine(paths, log, SeedBlock(2_000, 2_012), episodes=12)
    try:
        engine.start()
        assert engine.wait(timeout=60)
    finally:
        engine.close()
    assert not engine.errors
    records = log.records()
    assert len(records) == 24
    runner = by_seed(r for r in records if r.path == "runner")
    jit = by_seed(r for r in records if r.path == "jit")
    assert sorted(runner) == list(range(2_000, 2_012)) and runner == jit
