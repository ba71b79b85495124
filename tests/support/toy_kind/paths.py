"""The toy library's two paths: its linear policy in float64 (`float64`) and as deployed in float32 (`float32`),
on tui-eval's shared vector-env loop; each replays itself on one seed and offers its policy to the doctor."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from tui_eval.feed import FeedRelay, SeedFeed
from tui_eval.paths.base import Emit, InferencePath, LiveParts
from tui_eval.paths.rerun import Side, Stateless, Trace
from tui_eval.paths.vector_loop import make_guarded_vector_env, play_vector, record_of


class ToyPath(InferencePath):
    def __init__(self, *, name: str, weights: list[list[float]], env_id: str, env_config: dict[str, Any],
                 num_envs: int, explore: bool, success_key: str | None, step_timeout: float | None):
        self.name, self.explore, self.num_envs = name, explore, num_envs
        dtype = np.float32 if name == "float32" else np.float64
        self.weights = np.asarray(weights, dtype=dtype)
        self.env_id, self.env_config = env_id, env_config
        self.relay = FeedRelay()
        self.env = make_guarded_vector_env(env_id, env_config, num_envs, self.relay, success_key, step_timeout)
        self.description = f"toy linear policy in {dtype.__name__}, {num_envs} envs"

    def logits(self, obs: Any) -> np.ndarray:
        return np.asarray(obs, dtype=self.weights.dtype) @ self.weights.T

    def act(self, obs: Any) -> np.ndarray:
        return np.argmax(self.logits(obs), axis=-1)

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        self.relay.feed = feed
        try:
            play_vector(self.env, self.act, feed, emit,
                        lambda ret, length, info, wall: record_of(self.name, self.explore, ret, length, info, wall))
        finally:
            self.relay.feed = None

    def live_parts(self) -> LiveParts:
        return LiveParts("toy", make_env=lambda: gym.make(self.env_id, **self.env_config), explore=self.explore)

    def replay(self, seed: int) -> Trace:
        env = gym.make(self.env_id, **self.env_config)
        trace = Trace(self.name, {"obs": [], "module_out": [], "action": [], "action_for_env": []})
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            logits = self.logits(obs[None])[0]
            action = int(np.argmax(logits))
            for stage, value in (("obs", obs), ("module_out", logits), ("action", action), ("action_for_env", action)):
                trace.stages[stage].append(np.array(value, copy=True))
            obs, reward, terminated, truncated, _ = env.step(action)
            trace.ret, trace.length, done = trace.ret + float(reward), trace.length + 1, terminated or truncated
        env.close()
        trace.end = "ended"
        return trace

    def rerun(self, trace: Trace) -> Side:
        side = Side(self.name, trace, explore=self.explore, stateless=True)
        side.stepper = lambda: Stateless(lambda obs: self.act(np.asarray(obs)[None])[0])
        return side

    def close(self) -> None:
        self.env.close()
