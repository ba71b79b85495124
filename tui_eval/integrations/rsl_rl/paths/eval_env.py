"""The interface the rsl_rl paths step: an rsl_rl `VecEnv` whose worlds run labelled episodes.

Implementations: `vecenv.GymVecEnv` (a registered Gymnasium env) and `factory_env.FactoryVecEnv`
(a user's VecEnv factory); `vecenv.make_eval_vecenv` picks one.
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from tui_eval.errors import BadInput
from tui_eval.feed import SeedFeed

# world states (FactoryVecEnv; GymVecEnv uses LIVE and IDLE only)
IDLE, LIVE, DISCARD = 0, 1, 2


@dataclass(frozen=True, slots=True)
class EpisodeEnd:
    """One labelled episode that ended in the last `begin`/`step`."""

    world: int
    seed: int
    block: int
    success: bool | None
    reason: str | None  # set: the episode is invalid
    wall_s: float
    start: str | None = None  # a fingerprint of the world's first observation (tui_eval.envs.guard.start_fingerprint)
    termination: str | None = None  # the termination term that ended it (a manager-based env: manager_terms.py)
    reward_terms: tuple[tuple[str, float], ...] = ()  # each reward term's sum over the episode (same)


class EvalVecEnv(VecEnv):
    """An rsl_rl VecEnv whose worlds run labelled episodes, one per seed taken from a seed feed.

    After `begin(feed)` and after every `step`: `state[i]` says whether world i runs a labelled
    episode (LIVE), an episode that will not be recorded (DISCARD) or nothing (IDLE); `finished` lists
    the labelled episodes that ended. `busy` is False once no world can produce a record any more.
    """

    state: np.ndarray
    finished: list[EpisodeEnd]
    #: one line for the user: what the worlds are
    description: str = ""
    #: worlds seeded as a batch (a `--vecenv` simulator): records carry their world
    batched: bool = False

    @property
    def live(self) -> np.ndarray:
        return self.state == LIVE

    @property
    def busy(self) -> bool:
        return bool((self.state != IDLE).any())

    def begin(self, feed: SeedFeed) -> TensorDict:
        raise NotImplementedError

    def end(self) -> None:
        """Stop taking seeds (the run returned)."""

    def close(self) -> None:
        pass



def group_layout(space: gym.Space, images: bool = False) -> list[tuple[str, str | None, tuple[int, ...]]]:
    """(group name, key in a Dict observation or None, shape of one world's entry) per observation group.

    Groups are flat vectors, except 3-D Box observations when `images` is set (a CNN policy): those keep
    their (channels, height, width) shape, as rsl_rl's CNNModel takes them.
    """
    def shape(box: gym.Space) -> tuple[int, ...]:
        dims = tuple(int(d) for d in (box.shape or ()))
        return dims if images and len(dims) == 3 else (int(np.prod(dims)),)

    if isinstance(space, gym.spaces.Box):
        return [("policy", None, shape(space))]
    if isinstance(space, gym.spaces.Dict) and all(isinstance(s, gym.spaces.Box) for s in space.spaces.values()):
        return [(str(k), k, shape(s)) for k, s in space.spaces.items()]
    raise BadInput(f"observation space {space} is not a Box (or a Dict of Boxes); rsl_rl policies take "
                   "vectors or (C, H, W) images: pass an env with Box observations")
