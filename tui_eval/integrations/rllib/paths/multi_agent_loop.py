"""The env loop of RLlib 2.60's `MultiAgentEnvRunner._sample`, step for step, with the restored pipelines.

What it keeps from the EnvRunner, because connector pieces and the policy_mapping_fn depend on it:
- the vector env as MultiAgentEnvRunner.make_env builds it: the env registered with Gymnasium (no env
  checker) and stepped by RLlib's `make_vec` (SyncVectorMultiAgentEnv, NEXT_STEP autoreset);
- one `MultiAgentEpisode` per sub-env, built with the sub-env's agents' spaces and the config's
  `policy_mapping_fn` (which maps each agent to its module the first time the episode asks);
- one env-to-module call over all episodes after each vector step (with the step's observations, actions,
  rewards, infos and done flags as keyword data; first for the episodes just done, as the runner does),
  one `forward_inference` / `forward_exploration(t=...)` of the MultiRLModule (its modules' inner forward
  methods where they do the same work, see `forward`) and one module-to-env call;
  `ACTIONS_FOR_ENV` to the env, every output per agent into the episode;
- `shared_data["vector_env_episodes_map"]` as the runner fills it.
tui-eval only adds: episodes that began idle (no seed to run) are not reported.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from typing import Any

from tui_eval.feed import SeedFeed
from tui_eval.paths.base import Emit

#: an idle sub-env's episode is cut back to this lookback once this long (nothing reads it; memory stays flat)
IDLE_CUT_AT, IDLE_LOOKBACK = 512, 64
_ids = itertools.count()


def make_multi_agent_vec(make_guarded, num_envs: int):
    """`num_envs` guarded sub-envs as MultiAgentEnvRunner.make_env builds its vector env (SYNC mode)."""
    import gymnasium as gym
    from ray.rllib.env.vector.registration import make_vec

    env_id = f"tui_eval_multi_agent_env_{next(_ids)}-v0"  # RLlib uses one shared id; ours never clash
    gym.register(env_id, entry_point=lambda **_: make_guarded(), disable_env_checker=True)
    return make_vec(env_id, num_envs=num_envs, vectorization_mode=gym.VectorizeMode.SYNC)


class MultiAgentRunnerLoop:
    """Steps `env` (a VectorMultiAgentEnv of MultiAgentGuardedEnvs) with `module` (a MultiRLModule) and both
    pipelines as MultiAgentEnvRunner does; `record(episode, facts, wall_s)` makes what `emit` takes."""

    def __init__(self, *, env: Any, module: Any, env_to_module: Any, module_to_env: Any, mapping_fn, record):
        self.env, self.module, self.mapping_fn = env, module, mapping_fn
        self.env_to_module, self.module_to_env = env_to_module, module_to_env
        self.record = record
        self.t = 0  # env steps taken, the `t` of forward_exploration
        self.guards = [sub.unwrapped for sub in env.envs]

    def _new_episode(self, i: int):
        from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

        guard = self.guards[i]
        return MultiAgentEpisode(  # per-agent dicts, as the runner passes them (typed as one Space in ray)
            observation_space={aid: guard.get_observation_space(aid) for aid in guard.possible_agents},  # type: ignore[arg-type]
            action_space={aid: guard.get_action_space(aid) for aid in guard.possible_agents},  # type: ignore[arg-type]
            agent_to_module_mapping_fn=self.mapping_fn)

    def run(self, feed: SeedFeed, emit: Emit, explore: bool) -> None:
        from ray.rllib.core.columns import Columns
        from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

        n = self.env.num_envs
        episodes = [self._new_episode(i) for i in range(n)]
        shared_data: dict[str, Any] = {}
        obs, infos = self.env.reset()
        for i in range(n):
            episodes[i].add_env_reset(observations=obs[i], infos=infos[i])
        idle = [guard.idle for guard in self.guards]
        started = [time.perf_counter()] * n
        to_module = self.env_to_module(rl_module=self.module, episodes=episodes, explore=explore,
                                       shared_data=shared_data, **{Columns.OBS: obs, Columns.INFOS: infos})
        while not all(idle) and not feed.cancelled:
            to_env = self._act(to_module, episodes, explore, shared_data) if to_module else {}
            shared_data["vector_env_episodes_map"] = {}
            actions = to_env.pop(Columns.ACTIONS, [{} for _ in episodes])
            obs, rewards, terminateds, truncateds, infos = self.env.step(to_env.pop(Columns.ACTIONS_FOR_ENV, actions))
            now = time.perf_counter()
            self._add_step(episodes, to_env, (obs, actions, rewards, terminateds, truncateds, infos), idle, started,
                           now)
            done = []
            for i in range(n):
                episode = episodes[i]
                if episode.is_done:
                    if not idle[i]:
                        emit(self.record(episode, self.guards[i].episode_facts(), now - started[i]))
                    MultiAgentEnvRunner._prune_zero_len_sa_episodes(episode)
                    done.append(episode)
                    episodes[i], idle[i] = self._new_episode(i), False  # reset by the next step
                    shared_data["vector_env_episodes_map"][episode.id_] = episodes[i].id_
                elif idle[i] and len(episode) >= IDLE_CUT_AT:
                    episodes[i] = episode.cut(len_lookback_buffer=IDLE_LOOKBACK)
            data = {Columns.OBS: obs, Columns.ACTIONS: actions, Columns.REWARDS: rewards, Columns.INFOS: infos,
                    Columns.TERMINATEDS: terminateds, Columns.TRUNCATEDS: truncateds}
            if done:  # the runner's last pass over the episodes just done (e.g. one-hot of the last obs)
                self.env_to_module(batch={}, episodes=done, explore=explore, rl_module=self.module,
                                   shared_data=shared_data, **data)
            to_module = self.env_to_module(episodes=episodes, batch={}, explore=explore, rl_module=self.module,
                                           shared_data=shared_data, **data)

    def _act(self, to_module: Any, episodes: list, explore: bool, shared_data: dict) -> Any:
        import torch

        with torch.no_grad():
            if explore:
                to_env = forward(self.module, to_module, "exploration", t=self.t)
            else:
                to_env = forward(self.module, to_module, "inference")
        return self.module_to_env(rl_module=self.module, batch=to_env, episodes=episodes, explore=explore,
                                  shared_data=shared_data)

    def _add_step(self, episodes: list, to_env: dict, step: tuple, idle: list, started: list, now: float) -> None:
        """Each sub-env's step into its episode (a reset for an episode not begun), as the runner adds it."""
        from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

        obs, actions, rewards, terminateds, truncateds, infos = step
        for i, episode in enumerate(episodes):
            if not episode.is_reset:
                episode.add_env_reset(observations=obs[i], infos=infos[i])
                idle[i], started[i] = self.guards[i].idle, now
                continue
            extra: dict[Any, dict[str, Any]] = defaultdict(dict)
            for column, per_env in to_env.items():
                for agent_id, value in per_env[i].items():
                    extra[agent_id][column] = value
                    extra[agent_id][WEIGHTS_SEQ_NO] = 0  # restored weights are never synced
            episode.add_env_step(observations=obs[i], actions=actions[i], rewards=rewards[i], infos=infos[i],
                                 terminateds=terminateds[i], truncateds=truncateds[i], extra_model_outputs=dict(extra))
            self.t += 1


def forward(module: Any, batch: dict, phase: str, **kwargs) -> dict:
    """`module.forward_<phase>(batch, **kwargs)` of a MultiRLModule: per module id in the batch, its TorchRLModule's
    `forward_<phase>`, which sets eval() (a walk over all its submodules) around `_forward_<phase>`. With every
    module of RLlib's classes' entry points and already in eval mode (as the path keeps them), `_forward_<phase>`
    directly does the same work; else the module's own entry point."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
    from ray.rllib.core.rl_module.rl_module import RLModule
    from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule

    entry, inner = f"forward_{phase}", f"_forward_{phase}"
    subs = [module._rl_modules[mid] for mid in batch if mid in module]
    if getattr(type(module), entry) is not getattr(RLModule, entry) \
            or getattr(type(module), inner) is not getattr(MultiRLModule, inner) \
            or not all(getattr(type(sub), entry) is getattr(TorchRLModule, entry) and not sub.training for sub in subs):
        return getattr(module, entry)(batch, **kwargs)
    return {mid: getattr(module._rl_modules[mid], inner)(batch[mid], **kwargs) for mid in batch if mid in module}
