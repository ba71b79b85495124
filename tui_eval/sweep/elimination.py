"""Which checkpoint is best on held-out seeds: sequential elimination on paired seeds, valid while watched.

Every checkpoint still in the race plays the same seeds, round by round. For each pair (i, j) of checkpoints the
per-seed differences of their returns (seeds where both episodes were valid) give an anytime-valid confidence
sequence for the mean difference: the asymptotic CS of Waudby-Smith et al. (2021) with tui-eval's tail-side
guard (stats/tail_guard.py), each at alpha / (K(K-1)/2) for the K checkpoints the sweep started with. A
checkpoint whose interval against another lies wholly below zero is eliminated: it gets no more episodes.

What this holds: with probability at least 1 - alpha (asymptotically, at any number of rounds and whenever the
sweep stops), no interval misses its mean difference, so the checkpoint with the highest mean return is never
eliminated. The sweep ends when one checkpoint remains ("best"), when every pair left lies within
±`margin` ("indistinguishable": any of them is within the margin of the best), or at the budget (the survivors
are then named, the leader first, with no claim that it is the best).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from tui_eval.stats.tail_guard import tail_guarded_cs_from_moments

BEST, INDISTINGUISHABLE, BUDGET, STOPPED = "best", "indistinguishable", "budget", "stopped"


@dataclass
class Arm:
    name: str
    returns: dict[int, float] = field(default_factory=dict)  # seed -> return of a valid episode
    invalid: int = 0
    episodes: int = 0
    successes: int = 0
    success_known: int = 0  # episodes whose env said whether they succeeded
    eliminated_by: str | None = None  # the checkpoint it was found worse than
    eliminated_at: int | None = None  # the round

    @property
    def alive(self) -> bool:
        return self.eliminated_by is None

    @property
    def success_rate(self) -> float | None:
        return self.successes / self.success_known if self.success_known else None

    @property
    def mean(self) -> float | None:
        return float(np.mean(list(self.returns.values()))) if self.returns else None


def paired_cs(a: Arm, b: Arm, alpha: float, target_n: float = 100,
              burn_in: int = 30) -> tuple[tuple[float, float] | None, int]:
    """(anytime CS for mean(a) - mean(b) on the seeds both ran validly, how many such seeds)."""
    seeds = sorted(a.returns.keys() & b.returns.keys())
    d = np.array([a.returns[s] - b.returns[s] for s in seeds], dtype=float)
    n = len(d)
    if n < 2:
        return None, n
    mean = float(d.mean())
    dev = d - mean
    iv = tail_guarded_cs_from_moments(n, mean, float((dev ** 2).sum()), float((dev ** 3).sum()), float(d.min()),
                                      float(d.max()), alpha, target_n, burn_in)
    if iv is None and n >= burn_in and not d.any():
        iv = (0.0, 0.0)  # the same return on every paired seed: no difference to bound
    return iv, n


def mean_cs(arm: Arm, alpha: float = 0.05, target_n: float = 100,
            burn_in: int = 30) -> tuple[float, float] | None:
    """The anytime-valid CS for one checkpoint's mean return over its valid episodes (not corrected for the
    other checkpoints: what the board shows beside each mean)."""
    x = np.array(list(arm.returns.values()), dtype=float)
    if len(x) < 2:
        return None
    dev = x - x.mean()
    return tail_guarded_cs_from_moments(len(x), float(x.mean()), float((dev ** 2).sum()), float((dev ** 3).sum()),
                                        float(x.min()), float(x.max()), alpha, target_n, burn_in)


class Elimination:
    """The race: `record` each episode, `step` after each round; `outcome` says whether and why it ended."""

    def __init__(self, names: list[str], alpha: float = 0.05, margin: float | None = None, burn_in: int = 30):
        self.arms = {n: Arm(n) for n in names}
        self.alpha, self.margin, self.burn_in = alpha, margin, burn_in
        pairs = max(1, math.comb(len(names), 2))
        self.alpha_pair = alpha / pairs  # a union bound over every pair, fixed from the start
        self.rounds = 0
        self.outcome: str | None = BEST if len(names) == 1 else None

    def alive(self) -> list[Arm]:
        return [a for a in self.arms.values() if a.alive]

    def record(self, name: str, seed: int, ret: float, valid: bool, success: bool | None = None) -> None:
        arm = self.arms[name]
        arm.episodes += 1
        ok = valid and math.isfinite(ret)  # a return that is not finite makes the episode invalid
        if ok:
            arm.returns[seed] = float(ret)
        else:
            arm.invalid += 1
        if success is not None:  # an invalid episode is never a success
            arm.success_known += 1
            arm.successes += int(bool(success) and ok)

    def interval(self, a: str, b: str) -> tuple[tuple[float, float] | None, int]:
        return paired_cs(self.arms[a], self.arms[b], self.alpha_pair, burn_in=self.burn_in)

    def step(self) -> list[str]:
        """After a round: eliminate what is proven worse; returns the names eliminated now."""
        self.rounds += 1
        gone = []
        alive = self.alive()
        for a, b in combinations(alive, 2):
            iv, _ = self.interval(a.name, b.name)
            if iv is None:
                continue
            if iv[1] < 0 and a.alive:
                gone.append((a, b))
            elif iv[0] > 0 and b.alive:
                gone.append((b, a))
        for loser, winner in gone:
            if loser.alive:
                loser.eliminated_by, loser.eliminated_at = winner.name, self.rounds
        left = self.alive()
        if len(left) == 1:
            self.outcome = BEST
        elif self.margin is not None and self._within_margin(left):
            self.outcome = INDISTINGUISHABLE
        return [loser.name for loser, _ in gone]

    def _within_margin(self, left: list[Arm]) -> bool:
        assert self.margin is not None
        for a, b in combinations(left, 2):
            iv, _ = self.interval(a.name, b.name)
            if iv is None or not (-self.margin < iv[0] and iv[1] < self.margin):
                return False
        return True

    def ranking(self) -> list[Arm]:
        """Survivors first (highest mean first), then the eliminated, latest eliminated first."""
        alive = sorted(self.alive(), key=lambda a: -(a.mean if a.mean is not None else -math.inf))
        gone = sorted((a for a in self.arms.values() if not a.alive),
                      key=lambda a: (-(a.eliminated_at or 0), -(a.mean if a.mean is not None else -math.inf)))
        return alive + gone

    def spent(self) -> int:
        return sum(a.episodes for a in self.arms.values())
