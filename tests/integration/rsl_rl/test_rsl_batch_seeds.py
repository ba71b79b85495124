"""Batched simulators (a `--vecenv` factory: Isaac Lab, mjlab) have one seed per batch of worlds: seed S is world
S mod N of the batch seeded S - S mod N, and every batch is played from its own seed, on every path."""

from __future__ import annotations

import collections

import pytest

from tests.support.engines import run_to_end
from tests.support.rsl import BATCH_LOG_VARIABLE, ListFeed, demo_checkpoint, run_path
from tui_eval.config.spec import RunSpec
from tui_eval.integrations.rsl_rl.kind import RslRlKind
from tui_eval.integrations.rsl_rl.paths.factory_env import FactoryVecEnv

GLOBAL_VECENV = "tests.support.rsl:make_global_vecenv"


def test_each_batch_is_reseeded_and_seed_s_is_world_s_mod_n():
    kind = RslRlKind(demo_checkpoint(), RunSpec(checkpoint=str(demo_checkpoint()), num_envs=3,
                                                kind_options={"vecenv": GLOBAL_VECENV}))
    path = kind.build_path("jit", False)
    try:
        env = path.env
        assert isinstance(env, FactoryVecEnv) and "one seed per batch" in path.description
        feed = ListFeed(range(10, 18))
        worlds: dict[int, int] = {}
        env.begin(feed)
        import torch

        while env.busy:
            env.step(torch.zeros(3, 2))
            worlds.update({end.seed: end.world for end in env.finished})
        # seeds 10..17 on 3 worlds: batches 9 (worlds 1, 2), 12 and 15
        assert worlds == {seed: seed % 3 for seed in range(10, 18)} and env.batches == 3
    finally:
        path.close()


def test_a_batch_repeats_itself_whatever_drew_from_the_global_generator_before(tmp_path):
    kind = RslRlKind(demo_checkpoint(), RunSpec(checkpoint=str(demo_checkpoint()), num_envs=4,
                                                kind_options={"vecenv": GLOBAL_VECENV}))
    results = []
    for noise in (0, 1000):
        import torch

        torch.rand(noise)  # what a runner's construction or another path draws from torch's generator
        path = kind.build_path("jit", False)
        try:
            results.append({r.seed: (r.ret, r.length) for r in run_path(path, range(100, 108))})
        finally:
            path.close()
    assert results[0] == results[1] and len(results[0]) == 8


@pytest.mark.parametrize("paths", ["runner,jit"])
def test_paths_of_a_batched_simulator_run_the_same_worlds_in_their_own_processes(tmp_path, paths, monkeypatch):
    """The simulator refuses a second thread, as MuJoCo-Warp crashes on one: each path has a process of its own,
    and world by world the runner and its TorchScript export give the same episodes. The path process holds a
    whole batch of seeds ahead: no batch runs short of seeds (its idle worlds would cost a batch's steps)."""
    batches = tmp_path / "batches.txt"
    monkeypatch.setenv(BATCH_LOG_VARIABLE, str(batches))
    engine, records = run_to_end(demo_checkpoint(), "--vecenv", GLOBAL_VECENV, "--num-envs", "4", "--paths", paths,
                                 "--seeds", "1000:1016", log=tmp_path / "run.sqlite", own_processes=True)
    resets = collections.Counter(batches.read_text().split())
    child = engine.paths["jit"]
    assert child._capacity == 4  # the worlds it plays at once: it is offered a batch of seeds ahead
    # 16 seeds on 4 worlds: 4 full batches; a top-up that arrives after a batch began makes one more (on a busy
    # machine, a few): a batch never waits for seeds yet
    assert 4 <= resets[str(child.pid)] <= 16, resets
    by_path = {name: {r.seed: (r.ret, r.length, r.success) for r in records if r.path == name}
               for name in paths.split(",")}
    assert sorted(by_path["runner"]) == list(range(1000, 1016))
    assert not any(r.invalid for r in records)
    assert by_path["runner"] == by_path["jit"]
    assert "in a process of its own" in engine.paths["jit"].description


def test_a_simulator_that_ignores_its_seeds_repeats_episodes_and_the_comparison_says_so(tmp_path):
    """Every batch of a simulator that ignores its seed starts alike: the same episodes come back under other
    seeds. Each is counted, and the verdict says the seeds were not independent; records carry their world."""
    from tui_eval.views.format import verdict_line

    engine, records = run_to_end(demo_checkpoint(), "--vecenv", "tests.support.rsl:make_seedless_vecenv",
                                 "--num-envs", "3", "--episodes", "9", log=tmp_path / "run.sqlite")
    start = engine.blocks[0].start
    assert all(r.world == (r.seed % 3) and r.start for r in records)
    assert {r.to_json()["batch_seed"] for r in records} == {s - s % 3 for s in range(start, start + 9)}
    summary = engine.stats.comparison_summary()
    assert summary.repeated >= 6  # 3 or 4 batches of the same 3 worlds, on each of two paths
    assert "the seeds were not independent" in verdict_line(summary)
    from tui_eval.log.store import RunLog

    back = RunLog(tmp_path / "run.sqlite", readonly=True).records()
    assert sorted((r.path, r.seed, r.world, r.start) for r in back) == sorted(
        (r.path, r.seed, r.world, r.start) for r in records)
