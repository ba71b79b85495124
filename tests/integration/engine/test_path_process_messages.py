"""A path in its own process talks to the run in few messages (tui_eval/isolation/pace.py): each message wakes a thread
that takes the GIL from the episode thread. The real rsl_rl PointGoal demo at 64 worlds ends thousands of episodes a
second; its records come in about one message per `GATHER_S`, the last of them as soon as the last episode ends."""

from __future__ import annotations

import os
import time

import pytest

from tests.support.rsl import ListFeed, demo_checkpoint
from tui_eval.config.spec import RunSpec
from tui_eval.integrations.rsl_rl import warm_imports
from tui_eval.isolation.forked import end_zygote
from tui_eval.isolation.pace import GATHER_S, EpisodeRate
from tui_eval.isolation.process_path import ProcessPath, start_ahead

POINTGOAL = demo_checkpoint()
SEEDS = range(5_000_000, 5_002_048)


@pytest.fixture
def jit_in_its_own_process():
    end_zygote()
    start_ahead(1, warm_imports(POINTGOAL) or ("torch",))
    path = ProcessPath(RunSpec(checkpoint=str(POINTGOAL), num_envs=64), "jit", False,
                       {"cwd": os.getcwd(), "threads": 1, "keep_apart": []})
    try:
        yield path
    finally:
        path.close()
        end_zygote()


def test_a_fast_path_sends_its_records_in_a_message_per_gather_and_none_is_lost(jit_in_its_own_process):
    path = jit_in_its_own_process
    sizes: list[int] = []
    receive = path._receive  # counted on the way in: the messages the run's threads wake for

    def counted(message, emit):
        if message[0] == "records":
            sizes.append(len(message[1]))
        return receive(message, emit)

    path._receive = counted  # type: ignore[method-assign]
    path.run(ListFeed(SEEDS[:256]), lambda record: None)  # the rate is measured: offers run ahead of it
    sizes.clear()
    records: list = []
    started = time.perf_counter()
    path.run(ListFeed(SEEDS), records.append)
    took = time.perf_counter() - started
    assert sorted(r.seed for r in records) == list(SEEDS)
    # a message at most every 5 ms sent ~120 here, a message per gather ~30
    assert len(sizes) <= took / GATHER_S + 10, (len(sizes), took, sizes)
    # a record sent alone while few seeds are left (a run with none left to offer said so: ~500 alone without that)
    assert sum(1 for n in sizes if n == 1) <= 25, sizes


def test_the_rate_holds_over_a_pause_and_follows_the_pace():
    rate = EpisodeRate()
    time.sleep(0.3)  # nothing ended: a gap, not a slow pace
    assert rate.add(10) == 0.0
    for _ in range(8):
        time.sleep(0.01)
        rate.add(20)
    assert 800 < rate.per_s < 2500  # 20 every ~10 ms
    time.sleep(0.3)
    assert rate.add(1) == pytest.approx(rate.per_s) and rate.per_s > 800  # the pause leaves the pace as it was
    assert rate.seeds_for(0.1) == int(rate.per_s * 0.1) + 1
