"""Custom paths (`--path NAME=tests/support/planted_paths.py:FACTORY`) that differ from the checkpoint's policy
for real: a difference that replays the same on each path alone, so `DIFFER (exact)` is proven."""

from __future__ import annotations


class AlwaysLeft:
    """Pushes the cart left at every step: a deterministic policy that is not the checkpoint's."""

    def act(self, obs):
        return 0


def always_left(checkpoint: str, *, explore: bool, device: str) -> AlwaysLeft:
    return AlwaysLeft()
