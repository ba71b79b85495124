"""The env loop of RLlib 2.60's `SingleAgentEnvRunner._sample`, step for step, with the restored pipelines.

What it keeps from the EnvRunner, because connector pieces depend on it:
- one `SingleAgentEpisode(observation_space=env.single_observation_space, action_space=...)` per sub-env,
  default lookback; a new one right after an episode is done, filled by `add_env_reset` on the next step
  (NEXT_STEP autoreset);
- one env-to-module call per vector step over all episodes, after the episodes took the step, with the
  unbatched observations/actions and the step's rewards, infos and done flags as keyword data; one
  forward (`forward_exploration(t=...)` or `forward_inference`) and one module-to-env call on that batch;
- `ACTIONS_FOR_ENV` to the env, `ACTIONS` and every other output (state outs included) into the episode;
- every sub-env steps every time, an idle one too: its episode goes on (a piece that rewrites the newest
  observation, such as PrevActionsPrevRewards or FlattenObservations, must see each observation once).
tui-eval only adds: episodes that began idle (no seed to run) are not reported.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from tui_eval.envs.guard import IDLE_KEY
from tui_eval.feed import SeedFeed
from tui_eval.integrations.rllib.paths.episode_steps import EpisodeSteps
from tui_eval.paths.base import Emit

#: an idle sub-env's episode is cut back to this lookback once this long (nothing reads it; memory stays flat)
IDLE_CUT_AT, IDLE_LOOKBACK = 512, 64


class RunnerLoop:
    """Steps `env` with `module` and both pipelines as SingleAgentEnvRunner does; `record(episode, info,
    wall_s)` turns a finished episode into what `emit` takes."""

    def __init__(self, *, env: Any, module: Any, env_to_module: Any, module_to_env: Any, record) -> None:
        import torch

        self.env, self.module = env, module
        self.env_to_module, self.module_to_env = env_to_module, module_to_env
        self.record = record
        self.t = 0  # env steps taken, the `t` of forward_exploration
        self.steps = EpisodeSteps()
        self._no_grad = torch.no_grad()  # one context manager, entered on every forward

    def _new_episode(self):
        from ray.rllib.env.single_agent_episode import SingleAgentEpisode

        return SingleAgentEpisode(observation_space=self.env.single_observation_space,
                                  action_space=self.env.single_action_space)

    def run(self, feed: SeedFeed, emit: Emit, explore: bool) -> None:
        from ray.rllib.core.columns import Columns

        n = self.env.num_envs
        episodes = [self._new_episode() for _ in range(n)]
        shared_data: dict[str, Any] = {}
        obs, infos = self.env.reset()
        obs = _unbatch(obs)
        for i in range(n):
            episodes[i].add_env_reset(observation=obs[i], infos=infos[i])
        idle = [IDLE_KEY in info for info in infos]
        started = [time.perf_counter()] * n
        every_row = list(range(n))
        fresh: list[int] = []
        to_module = self.env_to_module(rl_module=self.module, episodes=episodes, explore=explore,
                                       shared_data=shared_data, **{Columns.OBS: obs, Columns.INFOS: infos})
        while not all(idle) and not feed.cancelled:
            to_env = self._forward(to_module, explore)
            to_env = self.module_to_env(rl_module=self.module, batch=to_env, episodes=episodes, explore=explore,
                                        shared_data=shared_data)
            actions = to_env.pop(Columns.ACTIONS)
            obs, rewards, terminateds, truncateds, infos = self.env.step(to_env.pop(Columns.ACTIONS_FOR_ENV, actions))
            obs, actions = _unbatch(obs), _unbatch(actions)
            now = time.perf_counter()
            rows = every_row
            if fresh:  # the episodes started in place of those that ended: their env's reset comes first
                for i in fresh:
                    episodes[i].add_env_reset(observation=obs[i], infos=infos[i])
                    idle[i], started[i] = IDLE_KEY in infos[i], now
                rows = [i for i in every_row if i not in fresh]
                fresh = []
            self.t += len(rows)
            self.steps.add(episodes, rows, obs, actions, rewards, infos, terminateds, truncateds, to_env)
            to_module = self.env_to_module(
                episodes=episodes, batch={}, explore=explore, rl_module=self.module, shared_data=shared_data,
                **{Columns.OBS: obs, Columns.ACTIONS: actions, Columns.REWARDS: rewards, Columns.INFOS: infos,
                   Columns.TERMINATEDS: terminateds, Columns.TRUNCATEDS: truncateds})
            # most steps end no episode (Python's any of a short list: a tenth of numpy's any)
            if any(terminateds.tolist()) or any(truncateds.tolist()) or any(idle):
                fresh = self._episodes_ended(episodes, idle, infos, now, started, emit)

    def _episodes_ended(self, episodes: list, idle: list[bool], infos: list, now: float, started: list[float],
                        emit: Emit) -> list[int]:
        """Records the episodes that ended on this step and starts new ones in their place (their rows, which
        the next step resets); cuts back the episodes of idle envs."""
        fresh = []
        for i, episode in enumerate(episodes):
            if episode.is_done:
                if not idle[i]:
                    emit(self.record(episode, infos[i], now - started[i]))
                episodes[i], idle[i] = self._new_episode(), False
                fresh.append(i)
            elif idle[i] and len(episode) >= IDLE_CUT_AT:
                episodes[i] = episode.cut(len_lookback_buffer=IDLE_LOOKBACK)
        return fresh

    def _forward(self, to_module: Any, explore: bool) -> Any:
        # forward_inference/forward_exploration set eval() on every call (a walk over all submodules);
        # the module is kept in eval mode, so their inner methods do the same work.
        with self._no_grad:
            if explore:
                return self.module._forward_exploration(to_module, t=self.t)
            return self.module._forward_inference(to_module)


def _unbatch(batch):
    """RLlib's unbatch (a tree walk), short-cut for the common case of one array (same items, in order)."""
    if isinstance(batch, np.ndarray):
        return list(batch)
    from ray.rllib.utils.spaces.space_utils import unbatch

    return unbatch(batch)
