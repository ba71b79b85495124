"""A policy whose episodes anyone can replay without it: LunarLander's "do nothing" (action 0). The frames a
terminal shows for it are compared with the env's own rgb_array frames (tests/e2e/test_real_terminals.py)."""

from __future__ import annotations

import os
import time

import gymnasium as gym

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
    """The same, as fast as the env steps (bench/bench_frames.py measures what drawing costs it)."""
    return DoNothingAtFullSpeed()



# A path whose env resets late with the run's first seed: until then the other path's pane shows that seed and
# this path's pane waits (tui-eval run --import this file --env LunarLanderLateFirstSeed-v0). It is late until the
# file named by TUI_EVAL_LATE_GATE exists (a test creates it once it has seen the waiting pane), LATE_S at most.
LATE_S = 120.0
_LATE_SEED = "TUI_EVAL_LATE_FIRST_SEED"  # set in the late path's own process by its factory
LATE_GATE = "TUI_EVAL_LATE_GATE"


class _LateFirstSeed(gym.Wrapper):
    def reset(self, *, seed=None, options=None):
        late = os.environ.get(_LATE_SEED)
        if late is not None and seed == int(late):
            del os.environ[_LATE_SEED]
            gate, deadline = os.environ.get(LATE_GATE), time.monotonic() + LATE_S
            while time.monotonic() < deadline and not (gate and os.path.exists(gate)):
                time.sleep(0.1)
        return self.env.reset(seed=seed, options=options)


gym.register("LunarLanderLateFirstSeed-v0",
             entry_point=lambda **kwargs: _LateFirstSeed(gym.make("LunarLander-v3", **kwargs)))


def do_nothing_late(checkpoint: str, *, explore: bool, device: str) -> DoNothing:
    """Do nothing, in an env whose reset with seed 7 comes late (until TUI_EVAL_LATE_GATE's file exists)."""
    os.environ[_LATE_SEED] = "7"
    return DoNothing()
