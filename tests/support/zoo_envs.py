"""Deterministic CartPoles with structured spaces, for the connector/space conformance checkpoints.

RLlib's own example envs cover a Dict observation (`CartPoleWithDictObservationSpace`) and a stateless
CartPole; its `RandomEnv` has arbitrary spaces but ignores reset seeds, so it cannot be compared seed by
seed. These wrap Gymnasium's CartPole (seeded by `reset(seed=...)`) and only re-encode what it sees and
how it is told to push:

- observations: `box` (the state stretched to [-1, 1]: a small untrained policy's actions then depend on
  what it sees, unlike on CartPole's small raw numbers), `tuple` (with a MultiDiscrete part),
  `multidiscrete`, `multibinary`, `dict` (with a MultiBinary part; keys deliberately not sorted: the env's
  own order, an OrderedDict) or `channel` (a (2, 2, 1) Box: an image of one channel, which
  FrameStackingEnvToModule stacks);
- actions: `discrete`, `multidiscrete`, `multibinary`, `tuple`, `dict` (each decoded to push left/right).
"""

from __future__ import annotations

from collections import OrderedDict

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv

BINS = 5
EDGES = np.array([2.4, 3.0, 0.21, 3.0], dtype=np.float32)


def _observation_space(kind: str) -> gym.Space:
    box2 = gym.spaces.Box(-10.0, 10.0, (2,), np.float32)
    if kind == "tuple":
        return gym.spaces.Tuple([box2, gym.spaces.Discrete(BINS), gym.spaces.Box(-10.0, 10.0, (), np.float32),
                                 gym.spaces.MultiDiscrete([BINS, BINS])])
    if kind == "multidiscrete":
        return gym.spaces.MultiDiscrete([BINS] * 4)
    if kind == "multibinary":
        return gym.spaces.MultiBinary(4 * BINS)
    if kind == "dict":  # OrderedDict keeps the env's own key order (Gymnasium sorts a plain dict's keys)
        return gym.spaces.Dict(OrderedDict([("velocity", box2), ("angle_bin", gym.spaces.Discrete(BINS)),
                                            ("position", gym.spaces.Box(-10.0, 10.0, (2,), np.float32)),
                                            ("bins", gym.spaces.MultiBinary(BINS))]))
    if kind == "box":
        return gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    if kind == "channel":
        return gym.spaces.Box(-10.0, 10.0, (2, 2, 1), np.float32)
    raise ValueError(f"unknown observation kind {kind!r}")


def _action_space(kind: str) -> gym.Space:
    if kind == "discrete":
        return gym.spaces.Discrete(2)
    if kind == "multidiscrete":
        return gym.spaces.MultiDiscrete([2, 3])
    if kind == "multibinary":
        return gym.spaces.MultiBinary(2)
    if kind == "tuple":
        return gym.spaces.Tuple([gym.spaces.Discrete(2), gym.spaces.Box(-1.0, 1.0, (1,), np.float32)])
    if kind == "dict":
        return gym.spaces.Dict(OrderedDict([("push", gym.spaces.Discrete(2)),
                                            ("strength", gym.spaces.Box(-1.0, 1.0, (1,), np.float32))]))
    raise ValueError(f"unknown action kind {kind!r}")


def _one_hot(bins: np.ndarray) -> np.ndarray:
    onehot = np.zeros((4, BINS), np.int8)
    onehot[np.arange(4), bins] = 1
    return onehot.reshape(-1)


class StructuredCartPole(gym.Env):
    """CartPole-v1 physics, seeded by reset(seed), with the spaces named in `config`
    (`obs`, `action`, `max_steps`)."""

    def __init__(self, config=None):
        config = dict(config or {})
        self.obs_kind, self.action_kind = config.get("obs", "tuple"), config.get("action", "discrete")
        self.max_steps = int(config.get("max_steps", 60))
        self.observation_space = _observation_space(self.obs_kind)
        self.action_space = _action_space(self.action_kind)
        self.cartpole = CartPoleEnv()
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        state, info = self.cartpole.reset(seed=seed)
        self.steps = 0
        return self._encode(state), info

    def step(self, action):
        state, reward, terminated, _, info = self.cartpole.step(self._push(action))
        self.steps += 1
        return self._encode(state), float(reward), terminated, self.steps >= self.max_steps, info

    def _push(self, action) -> int:
        kind = self.action_kind
        if kind == "discrete":
            return int(action)
        if kind == "multidiscrete":
            return int((int(action[0]) + int(action[1])) % 2)
        if kind == "multibinary":
            return int(action[0] ^ action[1])
        if kind == "tuple":
            return int(action[0]) if float(action[1][0]) > -0.5 else 1 - int(action[0])
        return int(action["push"]) if float(action["strength"][0]) > -0.5 else 1 - int(action["push"])

    def _encode(self, state):
        state = np.asarray(state, np.float32)
        bins = np.clip(((state / EDGES + 1.0) / 2.0 * BINS).astype(np.int64), 0, BINS - 1)
        kind = self.obs_kind
        if kind == "tuple":
            return (state[[0, 1]], int(bins[2]), np.float32(state[3]), bins[[0, 1]])
        if kind == "multidiscrete":
            return bins
        if kind == "multibinary":
            return _one_hot(bins)
        if kind == "dict":
            return OrderedDict([("velocity", state[[1, 3]]), ("angle_bin", int(bins[2])),
                                ("position", state[[0, 2]]), ("bins", (np.arange(BINS) == bins[3]).astype(np.int8))])
        if kind == "box":
            return np.tanh(state / EDGES * 8.0).astype(np.float32)
        return state.reshape(2, 2, 1)


def _scale_connector_class():
    from ray.rllib.connectors.connector_v2 import ConnectorV2
    from ray.rllib.core.columns import Columns

    class ScaleObservations(ConnectorV2):
        """A user's own env-to-module piece: scales the newest observation of each episode in place
        (written back to the episode, as RLlib's own observation pieces do)."""

        def __init__(self, input_observation_space=None, input_action_space=None, *, factor: float = 1.0, **kwargs):
            super().__init__(input_observation_space, input_action_space, **kwargs)
            self.factor = factor

        def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
            for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=True):
                last = episode.get_observations(-1)
                episode.set_observations(at_indices=-1, new_data=(last * self.factor).astype(last.dtype))
            return batch

    ScaleObservations.__module__, ScaleObservations.__qualname__ = __name__, "ScaleObservations"
    del Columns
    return ScaleObservations


ScaleObservations = _scale_connector_class()


def _invert_actions_class():
    from ray.rllib.connectors.connector_v2 import ConnectorV2
    from ray.rllib.core.columns import Columns

    class InvertActions(ConnectorV2):
        """A user's own module-to-env piece: the env gets the other of two discrete actions (1 - a), item by
        item, where RLlib puts such pieces (after the time rank is removed, before actions are normalised);
        the episode stores the inverted action, as for any piece that rewrites ACTIONS."""

        def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
            self.foreach_batch_item_change_in_place(
                batch, column=Columns.ACTIONS, func=lambda action, eps_id, agent_id, module_id: 1 - action)
            return batch

    InvertActions.__module__, InvertActions.__qualname__ = __name__, "InvertActions"
    return InvertActions


InvertActions = _invert_actions_class()
