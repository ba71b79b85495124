"""The `evaluate` path's `evaluate()` calls end when they have nothing left to do, and its episodes reach the run as
they end: a run's last call does not step idle envs on, and a stop takes effect inside a call. Real
Algorithm.evaluate() on the CartPole demo, a local evaluation runner, the path as a kind builds it."""

from __future__ import annotations

import threading

import pytest

from tests.support.common import CARTPOLE
from tui_eval.feed import Heartbeat
from tui_eval.paths.activity import guarded_envs

NUM_ENVS = 4


class CountingSlot(list):
    """A heartbeat slot that counts the steps started in it (a start written at index 0)."""

    def __init__(self, heartbeat: CountingHeartbeat) -> None:
        super().__init__([None, None, 0])
        self.heartbeat = heartbeat

    def __setitem__(self, index, value) -> None:
        if index == 0 and value is not None:
            self.heartbeat.steps += 1
        super().__setitem__(index, value)


class CountingHeartbeat(Heartbeat):
    """Counts the env steps the path's envs take (each notes its step in its thread's slot)."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = 0

    def slot(self) -> list:
        return self._slots.setdefault(threading.get_ident(), CountingSlot(self))


class WatchingFeed:
    """The given seeds, then nothing; or without end, stopped once `stop_after` episodes were emitted. Notes
    what the path did around them: the asks for a seed while every env was idle, whether each episode
    arrived during an evaluate() call, the env steps taken after the stop."""

    def __init__(self, path, seeds, stop_after: int | None = None) -> None:
        self.path, self.seeds, self.stop_after = path, iter(seeds), stop_after
        self.heartbeat = CountingHeartbeat()
        self.records: list = []
        self.during_a_call: list[bool] = []
        self.asked_all_idle = 0
        self.steps_at_stop: int | None = None

    @property
    def cancelled(self) -> bool:
        return self.steps_at_stop is not None

    def take(self):
        seed = None if self.cancelled else next(self.seeds, None)
        if seed is None and all(env.idle for env in guarded_envs(self.path.algo.eval_env_runner.env)):
            self.asked_all_idle += 1
        return None if seed is None else (seed, 0)

    def emit(self, record) -> None:
        self.records.append(record)
        self.during_a_call.append(self.path._call_started is not None)
        if self.stop_after is not None and len(self.records) >= self.stop_after and self.steps_at_stop is None:
            self.steps_at_stop = self.heartbeat.steps


@pytest.fixture(scope="module")
def evaluate_path():
    from tui_eval.config.spec import RunSpec
    from tui_eval.integrations.rllib.kind import RllibKind

    kind = RllibKind(CARTPOLE, RunSpec(checkpoint=str(CARTPOLE), num_envs=NUM_ENVS))
    path = kind.build_path("evaluate", explore=False)
    yield path
    path.close()


def test_the_last_call_ends_once_every_env_is_idle(evaluate_path):
    """Before, the call in which the seeds ran out stepped every env on, idle, until its steps (about a second's
    worth) were done. Now it ends at the first step that finds every env idle and no seed to take."""
    feed = WatchingFeed(evaluate_path, range(4000, 4010))
    evaluate_path.run(feed, feed.emit)
    assert sorted(r.seed for r in feed.records) == list(range(4000, 4010))
    assert all(feed.during_a_call)  # each episode reached the run as it ended, not with the call's results
    # idle envs ask for a seed on each step: all of them at once in one vector step at most, before the call ends
    assert feed.asked_all_idle <= NUM_ENVS, feed.asked_all_idle


def test_a_stop_ends_the_call_in_progress(evaluate_path):
    """Seeds without end, the run stopped at its 3rd episode (a decided run, plain evaluate()'s first-N rule):
    the call in progress ends at the next step, with the other episodes in flight dropped."""
    feed = WatchingFeed(evaluate_path, range(5000, 10_000), stop_after=3)
    calls = evaluate_path._calls
    evaluate_path.run(feed, feed.emit)
    assert len(feed.records) == 3 and feed.steps_at_stop is not None
    assert evaluate_path._calls - calls == 1  # the call that saw the stop was the last
    assert feed.heartbeat.steps - feed.steps_at_stop <= NUM_ENVS  # at most the vector step in progress
    # the next run starts where this one stopped: its envs and episodes carry on, with the new run's seeds
    again = WatchingFeed(evaluate_path, range(6000, 6004))
    evaluate_path.run(again, again.emit)
    assert sorted(r.seed for r in again.records) == list(range(6000, 6004))
