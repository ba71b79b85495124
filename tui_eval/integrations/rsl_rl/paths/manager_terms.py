"""What a manager-based env (mjlab's or Isaac Lab's `ManagerBasedRlEnv`) says about each world's episode: the
termination term that ended it, and the sum of each reward term.

Both frameworks compute the reward as a weighted sum of named terms (`reward_manager`) and end episodes by named
terms (`termination_manager`), some of them time limits (`time_out=True`). Their own logs average the terms over
the worlds that happened to reset together (`extras["log"]["Episode_Reward/<term>"]`); here each world's episode
keeps its own: after every step, each term's contribution (`_step_reward` times the step's dt, as the manager adds
it to the reward) is summed per world, and when a world's episode ends, the terms whose flags are set name why.
"""

from __future__ import annotations

from typing import Any

import torch

#: termination terms that mean "the simulation blew up", not "the robot did something": an invalid world
NAN_TERM_FUNCTIONS = ("nan_detection",)


class ManagerTerms:
    """Per-world termination and reward terms of one manager-based env; `of(env)` is None for any other env."""

    def __init__(self, unwrapped: Any):
        self._env = unwrapped
        self._rewards = unwrapped.reward_manager
        self._terminations = unwrapped.termination_manager
        self.reward_names = [str(n) for n in self._rewards.active_terms]
        self.termination_names = [str(n) for n in self._terminations.active_terms]
        cfgs = {name: self._terminations.get_term_cfg(name) for name in self.termination_names}
        self.time_outs = {name for name, cfg in cfgs.items() if bool(getattr(cfg, "time_out", False))}
        self.nan_terms = {name for name, cfg in cfgs.items()
                          if getattr(getattr(cfg, "func", None), "__name__", "") in NAN_TERM_FUNCTIONS}
        n = int(unwrapped.num_envs)
        self._sums = torch.zeros(n, len(self.reward_names), dtype=torch.float64)
        self._scale = float(unwrapped.step_dt) if getattr(self._rewards, "_scale_by_dt", True) else 1.0

    @classmethod
    def of(cls, env: Any) -> ManagerTerms | None:
        unwrapped = getattr(env, "unwrapped", None)
        rewards = getattr(unwrapped, "reward_manager", None)
        terminations = getattr(unwrapped, "termination_manager", None)
        if rewards is None or terminations is None or not isinstance(getattr(rewards, "_step_reward", None),
                                                                      torch.Tensor):
            return None
        try:
            return cls(unwrapped)
        except Exception:  # a manager of another shape: the episodes are recorded without their terms
            return None

    def describe(self) -> str:
        limits = ", ".join(sorted(self.time_outs)) or "none"
        return (f"reward terms: {', '.join(self.reward_names)}; termination terms: "
                f"{', '.join(self.termination_names)} (time limits: {limits})")

    def begin(self) -> None:
        """Every world starts an episode."""
        self._sums.zero_()

    def after_step(self) -> None:
        """Add the step's per-term rewards (the manager keeps them per world until the next step)."""
        step = self._rewards._step_reward.detach().to("cpu", torch.float64)
        self._sums += step * self._scale

    def ended(self, world: int) -> tuple[str | None, tuple[tuple[str, float], ...]]:
        """Why world `world`'s episode just ended (a term that fired; one that is not a time limit first) and
        its reward terms' sums."""
        fired = [name for name in self.termination_names if bool(self._terminations.get_term(name)[world])]
        fired.sort(key=lambda name: name in self.time_outs)
        sums = self._sums[world].tolist()
        return (fired[0] if fired else None), tuple(zip(self.reward_names, map(float, sums)))

    def is_time_out(self, term: str | None) -> bool:
        return term is not None and term in self.time_outs

    def is_nan(self, term: str | None) -> bool:
        return term is not None and term in self.nan_terms
