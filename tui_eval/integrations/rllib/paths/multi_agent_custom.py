"""`--path NAME=MODULE:FACTORY` for a multi-agent checkpoint: the user's own loop or policy on one MultiAgentEnv.

The factory is called as for any checkpoint, `FACTORY(checkpoint: str, *, explore: bool, device: str)`, and
returns either
- `run_episode(env) -> None` (the episode form): one multi-agent episode on `env`, a MultiAgentEnv made by the
  checkpoint's own env recipe behind tui-eval's guard: `env.reset()` gives `(obs, infos)`, dicts by agent ID,
  and uses the run's seed whatever seed the loop passes; `env.step(actions)` takes a dict of actions by agent
  ID and gives the five dicts of a MultiAgentEnv, done when `terminateds["__all__"]` or
  `truncateds["__all__"]`;
- an object with `act(obs: dict) -> dict` (an action for each agent in `obs`) and optionally `reset()` (the
  act form): tui-eval steps the env itself; `obs` holds the agents to act (an agent whose episode ended acts
  no more, as in MultiAgentEnvRunner).

Returns are measured by tui-eval, never taken from the loop: each step goes into a MultiAgentEpisode built
with the env's spaces and the checkpoint's `policy_mapping_fn`, and the record is `multi_agent_record`'s, as
the built-in multi-agent paths build theirs: the team return, and per module the rewards of the agents the
checkpoint maps to it, whatever module the loop used for an agent (a loop that maps an agent to the wrong
module acts otherwise, and its returns show it). A step that RLlib's MultiAgentEpisode cannot take (an action
for an agent that is done, which MultiAgentEnvRunner never sends) makes the episode invalid, saying so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tui_eval.errors import first_line
from tui_eval.feed import SeedFeed
from tui_eval.integrations.rllib.parts import RLLIB_PARTS
from tui_eval.integrations.rllib.paths.multi_agent_env import MultiAgentGuardedEnv
from tui_eval.integrations.rllib.paths.multi_agent_record import multi_agent_record
from tui_eval.paths.base import Emit, LibraryParts
from tui_eval.paths.custom import CurrentSeed, CustomPath, play_target
from tui_eval.paths.rerun import MultiTrace


class RecordingGuard(MultiAgentGuardedEnv):
    """The guard that also keeps the first episode after each `begin()` as a MultiAgentEpisode (the rewards
    are the guard's), and, with `keep_actions`, the action dicts the loop sent (the doctor's replay)."""

    def __init__(self, env: Any, feed: Any, mapping_fn: Callable, success_key: str | None,
                 step_timeout: float | None):
        super().__init__(env, feed=feed, success_key=success_key, step_timeout=step_timeout)
        self.mapping_fn = mapping_fn
        self.keep_actions = False
        self.begin()

    def begin(self) -> None:
        self.episode: Any = None
        self.done, self.reset_called = False, False
        self.error: str | None = None
        self.actions: list[dict[Any, Any]] = []

    @property
    def length(self) -> int:
        return 0 if self.episode is None else int(self.episode.env_t)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if self.reset_called and self.length:  # a second episode in one call: only the first counts
            self.done = True
        self.reset_called = True
        obs, infos = super().reset(seed=seed, options=options)
        if not self.done:
            from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

            self.episode = MultiAgentEpisode(  # per-agent dicts, as MultiAgentEnvRunner passes them
                observation_space={a: self.get_observation_space(a) for a in self.possible_agents},  # type: ignore[arg-type]
                action_space={a: self.get_action_space(a) for a in self.possible_agents},  # type: ignore[arg-type]
                agent_to_module_mapping_fn=self.mapping_fn)
            self.episode.add_env_reset(observations=obs, infos=infos)
        return obs, infos

    def step(self, action_dict):
        obs, rewards, terminateds, truncateds, infos = super().step(action_dict)
        if not self.done and self.episode is not None:
            if self.keep_actions:
                self.actions.append({agent: np.array(a, copy=True) for agent, a in action_dict.items()})
            ended = [a for a in action_dict if a in self.episode.agent_episodes
                     and self.episode.agent_episodes[a].is_done]
            if ended:
                self.error, self.done = (f"the loop sent an action for agent {ended[0]} after that agent's episode "
                                         "ended (MultiAgentEnvRunner sends none)"), True
                return obs, rewards, terminateds, truncateds, infos
            try:
                self.episode.add_env_step(observations=obs, actions=action_dict, rewards=rewards, infos=infos,
                                          terminateds=terminateds, truncateds=truncateds)
            except Exception as exc:  # RLlib's episode refuses what its runner would never send
                self.error, self.done = f"the loop's step does not fit the episode: {first_line(exc)}", True
            else:
                self.done = bool(self.episode.is_done)
        return obs, rewards, terminateds, truncateds, infos


class MultiAgentCustomPath(CustomPath):
    """The user's loop (episode form) or policy (act form) on one MultiAgentEnv at a time, seeded by tui-eval;
    records as the built-in multi-agent paths make them."""

    def __init__(self, *, name: str, target: Any, make_env: Callable[[], Any], explore: bool,
                 success_key: str | None, step_timeout: float | None, source: str, mapping_fn: Callable,
                 module_ids: Sequence[str], view: str | None, remake: Callable[[bool], Any] | None = None,
                 library: LibraryParts = RLLIB_PARTS):
        self.name, self.remake, self.explore, self.target = name, remake, explore, target
        self.library = library
        self.module_ids, self.view = list(module_ids), view
        self.form = "episode" if not hasattr(target, "act") and callable(target) else "act"
        self.seed_feed = CurrentSeed()
        self.guarded: Any = RecordingGuard(make_env(), feed=self.seed_feed, mapping_fn=mapping_fn,
                                      success_key=success_key, step_timeout=step_timeout)
        self.env: Any = self.guarded
        form = "run_episode(env)" if self.form == "episode" else "act(obs)"
        self.description = (f"custom path {source} ({form} on a MultiAgentEnv, one env at a time; team and "
                            "per-module returns measured by tui-eval with the checkpoint's policy_mapping_fn)")

    def play(self, seed: int, block: int = 0, keep_actions: bool = False) -> Any:
        """One multi-agent episode on `seed`; the guard holds what the env saw."""
        self.seed_feed.seed = (seed, block)
        self.guarded.keep_actions = keep_actions
        self.guarded.begin()
        play_target(self.target, self.form, self.guarded, next_obs=_agents_still_acting)
        return self.guarded

    def replay(self, seed: int) -> MultiTrace:  # type: ignore[override]  # a multi-agent path's replay
        from tui_eval.integrations.rllib.paths.multi_agent_rerun import replay_loop

        return replay_loop(self, seed)

    def rerun(self, trace: Any) -> None:  # type: ignore[override]  # the single-agent probes do not apply
        return None

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        self.seed_feed.feed = feed  # the run's heartbeat and cancel flag
        while not feed.cancelled:
            taken = feed.take()
            if taken is None:
                return
            started = time.perf_counter()
            guard = self.play(*taken)
            facts = guard.episode_facts()
            reason = facts["invalid"] or guard.error
            if guard.episode is None:
                reason = "run_episode returned without resetting the env"
            elif not guard.done and reason is None:
                reason = f"run_episode returned before the episode ended (after {guard.length} steps)"
            chunks = [] if guard.episode is None else [guard.episode]
            facts = {**facts, "seed": taken[0], "block": taken[1], "invalid": reason,
                     "success": False if reason else facts["success"]}
            emit(multi_agent_record(path=self.name, facts=facts, chunks=chunks,
                                    module_ids=self.module_ids, view=self.view,
                                    wall_s=time.perf_counter() - started, explore=self.explore))


def _agents_still_acting(step) -> dict:
    """The step's observations less those of agents whose episode ended: as in MultiAgentEnvRunner, they act
    no more."""
    obs, _, terminateds, truncateds, _ = step
    return {a: o for a, o in obs.items() if not (terminateds.get(a) or truncateds.get(a))}
