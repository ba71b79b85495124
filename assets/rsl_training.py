"""What both rsl_rl demo scripts train with: seeded training episodes and a VecEnv that remembers success."""

from __future__ import annotations

import itertools
from collections import deque

from tui_eval.integrations.rsl_rl.paths.vecenv import GymVecEnv


class CountingFeed:
    """Seeds for training episodes: `start`, `start + 1`, ... (tui-eval's SeedFeed protocol)."""

    cancelled = False
    heartbeat = None

    def __init__(self, start: int) -> None:
        self._seeds = itertools.count(start)

    def take(self) -> tuple[int, int]:
        return next(self._seeds), 0


class TrainEnv(GymVecEnv):
    """The adapter, remembering recent episodes' success for the progress line."""

    def __init__(self, *args, recent: int = 200, **kwargs):
        super().__init__(*args, **kwargs)
        self.recent: deque[bool] = deque(maxlen=recent)

    def step(self, actions):
        out = super().step(actions)
        self.recent.extend(bool(end.success) for end in self.finished)
        return out
