"""The heartbeat a run's watchdog reads: a real GuardedEnv over a CartPole that hangs on its 5th step
(tests/support/fault_envs.py) notes the step it is in, in the slot of the thread that steps it, with its seed and
block; the slot is clear once the step returns; a new run's heartbeat and another thread get the steps that follow."""

from __future__ import annotations

import threading
import time

import gymnasium as gym

from tests.support import fault_envs
from tui_eval.envs.guard import GuardedEnv
from tui_eval.feed import Heartbeat


class OneSeedFeed:
    """Hands out one (seed, block), then nothing; carries `heartbeat`."""

    cancelled = False

    def __init__(self, seed: int, block: int, heartbeat: Heartbeat) -> None:
        self.seeds = [(seed, block)]
        self.heartbeat = heartbeat

    def take(self):
        return self.seeds.pop() if self.seeds else None


def steps_in_a_thread(env: GuardedEnv, steps: int) -> threading.Thread:
    thread = threading.Thread(target=lambda: [env.step(0) for _ in range(steps)], daemon=True)
    thread.start()
    return thread


def wait_for(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.01)


def test_a_step_in_progress_is_noted_whole_in_its_threads_slot_and_cleared_when_it_returns():
    fault_envs.RELEASE_FROZEN.clear()
    heartbeat = Heartbeat()
    env = GuardedEnv(gym.make("tests.support.fault_envs:FreezingCartPole-v0"), feed=OneSeedFeed(303, 7, heartbeat))
    env.reset()
    before = time.perf_counter()
    thread = steps_in_a_thread(env, fault_envs.BREAK_AT_STEP)  # seed 303 hangs at its 5th step
    try:
        wait_for(lambda: heartbeat.stepping(thread.ident) is not None and env.episode_steps == 5)
        started, seed, block = heartbeat.stepping(thread.ident)
        assert (seed, block) == (303, 7) and before <= started <= time.perf_counter()
        assert heartbeat.oldest() == (started, 303, 7)
        assert heartbeat.stepping(threading.get_ident()) is None  # this thread steps nothing
    finally:
        fault_envs.RELEASE_FROZEN.set()
    thread.join(10)
    assert heartbeat.stepping(thread.ident) is None and heartbeat.oldest() is None


def test_the_next_runs_heartbeat_and_another_thread_get_the_steps_that_follow():
    """A GuardedEnv keeps its thread's slot between steps: it must not keep writing to a heartbeat or a thread's
    slot that no longer steps it."""
    fault_envs.RELEASE_FROZEN.clear()
    first, second = Heartbeat(), Heartbeat()
    env = GuardedEnv(gym.make("tests.support.fault_envs:FreezingCartPole-v0"), feed=OneSeedFeed(301, 0, first))
    env.reset()
    steps_in_a_thread(env, 2).join(10)  # seed 301 does not hang
    assert first.oldest() is None
    env.feed = OneSeedFeed(306, 2, second)  # the next run
    env.reset()
    thread = steps_in_a_thread(env, fault_envs.BREAK_AT_STEP)  # seed 306 hangs at its 5th step
    try:
        wait_for(lambda: second.stepping(thread.ident) is not None and env.episode_steps == 5)
        assert second.stepping(thread.ident)[1:] == (306, 2)
        assert first.oldest() is None  # the earlier run's heartbeat hears nothing of it
    finally:
        fault_envs.RELEASE_FROZEN.set()
    thread.join(10)
    assert second.oldest() is None


def test_step_started_and_ended_note_a_step_for_code_that_keeps_no_slot():
    heartbeat = Heartbeat()
    key = heartbeat.step_started(None, -1, now=12.5)  # a batched simulator: all worlds at once
    assert heartbeat.stepping(threading.get_ident()) == (12.5, None, -1) == heartbeat.oldest()
    heartbeat.step_ended(key)
    assert heartbeat.stepping(threading.get_ident()) is None and heartbeat.oldest() is None
