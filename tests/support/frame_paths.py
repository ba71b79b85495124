"""A policy whose episodes anyone can replay without it: LunarLander's "do nothing" (action 0). The frames a
terminal shows for it are compared with the env's own rgb_array frames (tests/e2e/test_real_terminals.py)."""

from __future__ import annotations

import time

STEP_S = 0.02  # as slow as a policy on a robot: a frame panel opened at the start sees every episode


class DoNothing:
    def act(self, obs):
        time.sleep(STEP_S)
        return 0


def do_nothing(checkpoint: str, *, explore: bool, device: str) -> DoNothing:
    return DoNothing()


class DoNothingAtFullSpeed:
    def act(self, obs):
        return 0


def do_nothing_at_full_speed(checkpoint: str, *, explore: bool, device: str) -> DoNothingAtFullSpeed:
    """The same, as fast as the env steps (bench/bench_frames_terminal.py measures what drawing costs it)."""
    return DoNothingAtFullSpeed()
