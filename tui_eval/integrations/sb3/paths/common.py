"""What both SB3 paths share: the episode loop over tui-eval's guarded vector env, a one-seed replay that records
each step's stages for the doctor, and what the doctor reads of the path.

A path gives `act(obs_batch)` (the loop's policy) and `stages(obs)` (one observation's stages, ending with
`action_for_env`, the action the env is sent). The replay plays its own single env (the same recipe, no guard) on
the seed, so that the built path's envs are left as they are.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from tui_eval.errors import first_line
from tui_eval.feed import FeedRelay, SeedFeed
from tui_eval.integrations.sb3.paths.env import EnvRecipe, make_vector_env
from tui_eval.paths.base import Emit, InferencePath, LiveParts
from tui_eval.paths.rerun import STAGES, Trace, flat
from tui_eval.paths.vector_loop import play_vector, record_of

#: a replay that does not end within this many steps is cut (an env without a time limit)
MAX_REPLAY_STEPS = 100_000


class Sb3Path(InferencePath):
    recipe: EnvRecipe
    action_space: gym.Space

    def _start_env(self, recipe: EnvRecipe, num_envs: int, success_key: str | None,
                   step_timeout: float | None) -> None:
        self.recipe, self.num_envs, self.relay = recipe, num_envs, FeedRelay()
        self.env = make_vector_env(recipe, num_envs, self.relay, success_key, step_timeout)
        self.action_space = self.env.single_action_space

    def act(self, obs: Any) -> Any:
        raise NotImplementedError

    def stages(self, obs: Any) -> dict[str, Any]:
        raise NotImplementedError

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        self.relay.feed = feed
        try:
            play_vector(self.env, self.act, feed, emit,
                        lambda ret, length, info, wall: record_of(self.name, self.explore, ret, length, info, wall))
        finally:
            self.relay.feed = None

    def live_parts(self) -> LiveParts:
        return LiveParts("sb3", make_env=self.recipe.make, explore=self.explore)

    def replay(self, seed: int) -> Trace:
        """The path's policy on one episode of `seed`, every stage it can show recorded."""
        env = self.recipe.make()
        trace = Trace(self.name, {s: [] for s in STAGES})
        try:
            obs, _ = env.reset(seed=seed)
            trace.end = "truncated: the replay's step limit"
            for _ in range(MAX_REPLAY_STEPS):
                trace.keep_input(obs)
                for stage, value in {"obs": flat(obs), **self.stages(obs)}.items():
                    trace.stages[stage].append(np.array(value, copy=True))
                obs, reward, terminated, truncated, _ = env.step(trace.stages["action_for_env"][-1])
                trace.ret, trace.length = trace.ret + float(reward), trace.length + 1
                if terminated or truncated:
                    trace.end = "terminated" if terminated else "truncated"
                    break
        except Exception as exc:  # an env or a policy may raise anything: the replay says so
            trace.end = f"invalid: {first_line(exc)}"
        finally:
            env.close()
        shown = [s for s, v in trace.stages.items() if v]
        trace.note = f"the path's policy on its own env of this seed, recording {', '.join(shown)}"
        return trace

    def close(self) -> None:
        self.env.close()
