"""The step-by-step loop's one-pass episode writes leave every episode as RLlib's own `add_env_step` leaves it, on real
CartPole and Pendulum vector envs: the same buffers, items, types, flags and counters (not the step times)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers.vector import DictInfoToList
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

from tui_eval.integrations.rllib.paths.episode_steps import EpisodeSteps

ENVS = 3
TIMES = {"_start_time", "_last_step_time"}


def state_differences(mine, theirs, where: str = "") -> list[str]:
    """Where two episode states (or parts of them) differ: keys, lengths, types, dtypes, values."""
    if type(mine) is not type(theirs):
        return [f"{where}: {type(mine).__name__} != {type(theirs).__name__}"]
    if isinstance(mine, dict):
        if list(mine) != list(theirs):
            return [f"{where}: keys {list(mine)} != {list(theirs)}"]
        return [d for key in mine if key not in TIMES
                for d in state_differences(mine[key], theirs[key], f"{where}.{key}")]
    if isinstance(mine, (list, tuple)):
        if len(mine) != len(theirs):
            return [f"{where}: length {len(mine)} != {len(theirs)}"]
        return [d for i, (x, y) in enumerate(zip(mine, theirs)) for d in state_differences(x, y, f"{where}[{i}]")]
    if isinstance(mine, (np.ndarray, np.generic)):
        same = mine.dtype == theirs.dtype and np.shape(mine) == np.shape(theirs) and np.array_equal(mine, theirs)
        return [] if same else [f"{where}: {mine!r} != {theirs!r}"]
    return [] if mine == theirs else [f"{where}: {mine!r} != {theirs!r}"]


def episode_state(episode) -> dict:
    """What `get_state()` holds, and what it leaves out that the episode's next reads use."""
    return {**episode.get_state(), "last_observation": episode._last_added_observation,
            "last_infos": episode._last_added_infos}


def _outputs(rng, env, n: int) -> tuple[np.ndarray, dict]:
    """Actions and extra model outputs as the module-to-env pipeline hands them to the loop (rows per column)."""
    space = env.single_action_space
    if isinstance(space, gym.spaces.Discrete):
        actions = rng.integers(0, space.n, size=n).astype(np.int32)
        inputs = rng.normal(size=(n, space.n)).astype(np.float32)
    else:
        actions = rng.uniform(-2, 2, size=(n, *space.shape)).astype(np.float32)
        inputs = rng.normal(size=(n, 2 * space.shape[0])).astype(np.float32)
    return actions, {"action_dist_inputs": list(inputs), "action_logp": list(np.zeros(n, dtype=np.float32))}


def _theirs(episodes, rows, obs, actions, rewards, infos, terminateds, truncateds, outputs) -> None:
    for i in rows:
        extra = {key: column[i] for key, column in outputs.items()}
        extra[WEIGHTS_SEQ_NO] = 0
        episodes[i].add_env_step(observation=obs[i], action=actions[i], reward=rewards[i], infos=infos[i],
                                 terminated=terminateds[i], truncated=truncateds[i], extra_model_outputs=extra)


def play_both(env_id: str, steps: int, writer: EpisodeSteps, numpy_after: int | None = None) -> tuple[int, list[str]]:
    """Steps a real vector env, adding each step to two copies of the episodes: `writer`'s and RLlib's own; compares
    every episode when it ends (and all at the end). (episodes compared, differences)."""
    env = DictInfoToList(gym.make_vec(env_id, num_envs=ENVS, vectorization_mode="sync"))
    rng = np.random.default_rng(5)
    spaces = dict(observation_space=env.single_observation_space, action_space=env.single_action_space)
    mine = [SingleAgentEpisode(id_=f"e{i}", **spaces) for i in range(ENVS)]
    theirs = [SingleAgentEpisode(id_=f"e{i}", **spaces) for i in range(ENVS)]
    obs, infos = env.reset(seed=7)
    for i in range(ENVS):
        for episodes in (mine, theirs):
            episodes[i].add_env_reset(observation=obs[i], infos=infos[i])
    compared, found, fresh = 0, [], []
    for step in range(steps):
        actions, outputs = _outputs(rng, env, ENVS)
        obs, rewards, terminateds, truncateds, infos = env.step(actions)
        obs, actions = list(obs), list(actions)
        for i in fresh:
            for episodes in (mine, theirs):
                episodes[i].add_env_reset(observation=obs[i], infos=infos[i])
        rows = [i for i in range(ENVS) if i not in fresh]
        writer.add(mine, rows, obs, actions, rewards, infos, terminateds, truncateds, outputs)
        _theirs(theirs, rows, obs, actions, rewards, infos, terminateds, truncateds, outputs)
        if step == numpy_after:  # an episode in numpy takes RLlib's own call
            mine[0].to_numpy()
            theirs[0].to_numpy()
        fresh = [i for i in range(ENVS) if theirs[i].is_done]
        for i in fresh:
            compared += 1
            found += state_differences(episode_state(mine[i]), episode_state(theirs[i]), f"episode {compared}")
            mine[i] = SingleAgentEpisode(id_=f"e{i}-{step}", **spaces)
            theirs[i] = SingleAgentEpisode(id_=f"e{i}-{step}", **spaces)
    for i in range(ENVS):
        compared += 1
        found += state_differences(episode_state(mine[i]), episode_state(theirs[i]), f"episode in flight {i}")
    env.close()
    return compared, found


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_episodes_written_in_one_pass_equal_rllibs_own(env_id):
    compared, found = play_both(env_id, 450, EpisodeSteps())
    assert compared >= 2 * ENVS and not found, found[:5]


def test_an_episode_in_numpy_takes_rllibs_own_call_and_ends_the_same():
    compared, found = play_both("CartPole-v1", 300, EpisodeSteps(), numpy_after=3)
    assert compared > ENVS and not found, found[:5]


class _ForgetsTheDoneFlag(EpisodeSteps):
    """A planted mistake: the truncated flag is never written."""

    def add(self, episodes, rows, obs, actions, rewards, infos, terminateds, truncateds, outputs) -> None:
        super().add(episodes, rows, obs, actions, rewards, infos, terminateds, [False] * len(truncateds), outputs)


class _FloatRewards(EpisodeSteps):
    """A planted mistake: rewards as Python floats, not the env's numpy floats."""

    def add(self, episodes, rows, obs, actions, rewards, infos, terminateds, truncateds, outputs) -> None:
        super().add(episodes, rows, obs, actions, [float(r) for r in rewards], infos, terminateds, truncateds, outputs)


def test_a_planted_difference_in_the_writes_is_seen():
    _, found = play_both("Pendulum-v1", 210, _ForgetsTheDoneFlag())  # Pendulum ends by truncation at 200 steps
    assert any("is_truncated" in line for line in found), found[:5]
    _, found = play_both("CartPole-v1", 40, _FloatRewards())
    assert any("rewards" in line for line in found), found[:5]
