"""A user's MultiAgentEnv behind the same guard every path puts around its envs: each reset seeded from
the run's feed, a broken world an invalid episode, an env with no seed to run idle.

The multi-agent counterpart of `tui_eval.envs.guard.GuardedEnv`. RLlib's MultiAgentEnvRunner reads agents and
spaces from its sub-envs' `unwrapped`: the guard is a MultiAgentEnv itself (not a gym.Wrapper), so
`unwrapped` is the guard and every agent and space it reports is the user's env's. Readers take an
episode's seed, block, idle and invalid state from the guard (`episode_facts`) at the episode's end, before
the vector env's NEXT_STEP autoreset resets it.
"""

from __future__ import annotations

import math
import time
from typing import Any

from ray.rllib.env.multi_agent_env import MultiAgentEnv

from tui_eval.envs.guard import all_finite, read_success
from tui_eval.errors import first_line
from tui_eval.feed import SeedFeed
from tui_eval.integrations.rllib.paths.multi_agent_frames import render_modes, render_rgb

ALL = "__all__"


class MultiAgentGuardedEnv(MultiAgentEnv):
    """`env` (a MultiAgentEnv) seeded from `feed` at every reset. Invalid (non-finite observation or reward,
    an exception, a step slower than `step_timeout`): every agent terminates at once with reward 0 and
    the last finite observations. Idle (no seed to be had): the last observations, reward 0, until a seed
    comes; then the idle episode ends (all agents terminated) and the next reset runs that seed."""

    is_seed_guard = True  # read by tui_eval.paths.activity like a GuardedEnv: idle, seed, episode_steps

    def __init__(self, env: Any, feed: SeedFeed | None, success_key: str | None = None,
                 step_timeout: float | None = None):
        self.env = env  # before MultiAgentEnv.__init__, which reads `agents`
        super().__init__()
        self.feed, self.success_key, self.step_timeout = feed, success_key, step_timeout
        inner = env.unwrapped
        self.observation_spaces, self.action_spaces = inner.observation_spaces, inner.action_spaces
        self.observation_space, self.action_space = inner.observation_space, inner.action_space
        self.possible_agents = list(inner.possible_agents)
        # what the frame hub reads (multi_agent_frames.py): the render modes, rgb_array where sub-envs offer it
        self.metadata = {**(getattr(env, "metadata", None) or {}), "render_modes": render_modes(env)}
        self.render_mode = getattr(env, "render_mode", None)
        # the path's frame tap while this env is the one whose frames are shown (as GuardedEnv.shown)
        self.shown: Any = None
        self.seed: int | None = None
        self.block = 0
        self.idle = False
        self.invalid: str | None = None
        self.success: bool | None = None
        self._steps = 0
        self._last_obs: dict[Any, Any] | None = None
        self._pending_invalid: str | None = None
        self._woken_with: tuple[int, int] | None = None

    @property
    def agents(self) -> list:
        return list(self.env.unwrapped.agents)

    @agents.setter
    def agents(self, value) -> None:  # MultiAgentEnv.__init__ sets it; the user's env keeps its own
        pass

    @property
    def episode_steps(self) -> int:
        """Env steps taken in the episode in progress."""
        return self._steps

    def get_observation_space(self, agent_id):
        return self.env.unwrapped.get_observation_space(agent_id)

    def get_action_space(self, agent_id):
        return self.env.unwrapped.get_action_space(agent_id)

    def episode_facts(self) -> dict[str, Any]:
        """The episode that just ended: its seed, block, whether it was idle, why it was invalid, success."""
        return {"seed": self.seed, "block": self.block, "idle": self.idle, "invalid": self.invalid,
                "success": False if self.invalid else self.success}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if self.feed is not None:
            assigned, self._woken_with = self._woken_with or self.feed.take(), None
            if assigned is None:
                self.idle = True
                if self._last_obs is None:
                    self._last_obs = {aid: self.get_observation_space(aid).sample() for aid in self.possible_agents}
                return dict(self._last_obs), {}
            seed, self.block = assigned
        self.idle, self.seed, self._steps = False, seed, 0
        self.invalid, self.success, self._pending_invalid = None, None, None
        try:
            obs, infos = self.env.reset(seed=seed, options=options)
        except Exception as exc:  # a broken world must not stop the run
            self._pending_invalid = f"env raised on reset: {first_line(exc)}"
            obs, infos = {aid: self.get_observation_space(aid).sample() for aid in self.possible_agents}, {}
        else:
            if not all_finite(obs):
                self._pending_invalid = "non-finite observation at reset"
                obs = {aid: self.get_observation_space(aid).sample() for aid in obs}
        self._last_obs = dict(obs)
        tap = getattr(self.feed, "frames", None)
        if tap is not None:
            self.shown = tap if tap.on_reset(self, (self.block, seed), obs) else None
        return obs, infos

    def _end_all(self, action_dict: dict, reason: str | None):
        """Every agent that acted gets its last observation, reward 0, and is terminated."""
        if reason is not None:
            self.invalid, self.success = reason, False
        last = self._last_obs or {}
        obs = {aid: last[aid] if aid in last else self.get_observation_space(aid).sample() for aid in action_dict}
        done = {aid: True for aid in obs}
        if self.shown is not None and not self.idle:
            self.shown.on_step(self, last, 0.0, True)
        return obs, {aid: 0.0 for aid in obs}, {**done, ALL: True}, {ALL: False}, {}

    def step(self, action_dict):
        if self.idle:
            if self._woken_with is None and self.feed is not None:
                self._woken_with = self.feed.take()
            if self._woken_with is not None:
                return self._end_all(action_dict, None)
            last = self._last_obs or {}
            obs = {aid: last[aid] for aid in action_dict if aid in last}
            return obs, {aid: 0.0 for aid in obs}, {ALL: False}, {ALL: False}, {}
        if self._pending_invalid is not None:
            return self._end_all(action_dict, self._pending_invalid)
        self._steps += 1
        if not all_finite(action_dict):
            return self._end_all(action_dict, f"non-finite action at step {self._steps}")
        heartbeat = None if self.feed is None else self.feed.heartbeat
        if heartbeat is not None:  # the engine's watchdog notices a step that never returns
            heartbeat.step_started(self.seed, self.block)
        started = time.perf_counter()
        try:
            obs, rewards, terminateds, truncateds, infos = self.env.step(action_dict)
        except Exception as exc:  # a broken world must not stop the run: its episode is invalid
            return self._end_all(action_dict, f"env raised at step {self._steps}: {first_line(exc)}")
        finally:
            if heartbeat is not None:
                heartbeat.step_ended()
        if self.step_timeout is not None and (took := time.perf_counter() - started) > self.step_timeout:
            return self._end_all(action_dict, f"step {self._steps} took {took:.1f}s > --step-timeout "
                                              f"{self.step_timeout:g}s")
        if not all_finite(obs):
            return self._end_all(action_dict, f"non-finite observation at step {self._steps}")
        if not all(math.isfinite(float(r)) for r in rewards.values()):
            return self._end_all(action_dict, f"non-finite reward at step {self._steps}")
        self._last_obs = {**(self._last_obs or {}), **obs}
        if terminateds.get(ALL) or truncateds.get(ALL):
            found = [read_success(info, self.success_key) for info in infos.values() if isinstance(info, dict)]
            known = [s for s in found if s is not None]
            self.success = all(known) if known else None
        if self.shown is not None:  # the team's reward: what the shown episode's return adds up
            self.shown.on_step(self, obs, sum(float(r) for r in rewards.values()),
                               bool(terminateds.get(ALL) or truncateds.get(ALL)))
        return obs, rewards, terminateds, truncateds, infos

    def render(self):
        """The user's env's picture; with render_mode rgb_array (the frame hub sets it for one call), rgb_array
        for that call on the user's env and its sub-envs too."""
        return render_rgb(self.env) if self.render_mode == "rgb_array" else self.env.render()

    def close(self):
        self.env.close()
