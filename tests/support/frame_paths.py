"""A policy whose episodes anyone can replay without it: LunarLander's "do nothing" (action 0). The frames a
terminal shows for it are compared with the env's own rgb_array frames (tests/e2e/test_real_terminals.py)."""

from __future__ import annotations


class DoNothing:
    def act(self, obs):
        return 0


def do_nothing(checkpoint: str, *, explore: bool, device: str) -> DoNothing:
    return DoNothing()
