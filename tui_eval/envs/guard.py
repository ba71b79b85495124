"""Env plumbing shared by every path: seeding each reset from the run's seeds, and telling valid
episodes from invalid ones (a world that blew up, froze or raised) in the same way for all paths."""

from __future__ import annotations

import hashlib
import importlib
import math
import time
from threading import get_ident
from typing import Any

import gymnasium as gym
import numpy as np

from tui_eval.envs import global_rng
from tui_eval.errors import first_line
from tui_eval.feed import SeedFeed

# Keys GuardedEnv writes into `info` (at reset and at the end of an episode); readers (paths, RLlib callbacks)
# use these names.
SEED_KEY = "tui_eval_seed"
BLOCK_KEY = "tui_eval_block"
INVALID_KEY = "tui_eval_invalid"
SUCCESS_KEY = "tui_eval_success"
IDLE_KEY = "tui_eval_idle"

SUCCESS_CONVENTIONS = ("is_success", "success")

_INTEGER_TYPES = (int, np.int64, np.int32)  # discrete actions: always finite
_SUMMED_AT_MOST = 64  # elements of a 1-d float array that all_finite sums (beyond, isfinite() is cheaper)


def start_fingerprint(obs: Any) -> str:
    """A short fingerprint of an episode's first observation (a number array, a dict of them, a tensor): two
    episodes that start alike and end with the same return and length are one episode played twice."""
    if isinstance(obs, dict):
        parts = [start_fingerprint(obs[k]) for k in sorted(obs, key=str)]
        return hashlib.blake2b("".join(parts).encode(), digest_size=8).hexdigest()
    if hasattr(obs, "detach"):
        obs = obs.detach().cpu().numpy()
    data = np.ascontiguousarray(np.asarray(obs, dtype=np.float64))
    return hashlib.blake2b(data.tobytes(), digest_size=8).hexdigest()


def all_finite(value: Any) -> bool:
    """True when every number in a (possibly nested) observation, reward or action is finite."""
    if type(value) is np.ndarray:
        if value.dtype.kind == "f" and value.ndim == 1 and value.size <= _SUMMED_AT_MOST:
            try:  # a small observation every step: one exact sum of Python floats is a tenth of isfinite().all()
                return math.isfinite(math.fsum(value.tolist()))  # nan or inf in, nan or inf out
            except (OverflowError, ValueError):  # finite numbers whose sum overflowed; or inf + -inf
                pass
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    if type(value) in (int, bool, np.int64):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    if isinstance(value, (float, np.floating)):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(all_finite(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return all(all_finite(v) for v in value)
    if hasattr(value, "numpy") and hasattr(value, "dtype"):  # torch tensor
        return all_finite(value.detach().cpu().numpy())
    return True


def read_success(info: dict[str, Any], success_key: str | None) -> bool | None:
    """The success flag at an episode's end: `success_key` if given, else the common conventions."""
    keys = (success_key,) if success_key else SUCCESS_CONVENTIONS
    for key in keys:
        if key in info and info[key] is not None:
            value = info[key]
            if isinstance(value, np.ndarray):
                value = value.item()
            return bool(value)
    return None


class GuardedEnv(gym.Wrapper):
    """Seeds every reset from the run's seed feed and turns a broken world into an invalid episode.

    The process-wide generators (`random`, NumPy's, torch's) are seeded from the episode's seed right before
    the env's reset, and an env that draws from them keeps its own copy across its calls
    (tui_eval/envs/global_rng.py): so the episode follows its seed, whatever the policy or other sub-envs drew.

    Invalid (non-finite observation/reward/action, an exception from the env, a step slower than
    `step_timeout`): the episode terminates at once with reward 0 and `info[INVALID_KEY]` naming the
    reason, and the last finite observation is returned so that the policy never sees NaN.

    With a seed feed that has nothing to hand out, the env goes idle: it returns its last
    observation with reward 0 and marks `info[IDLE_KEY]`; vector loops skip idle envs. An idle env asks
    the feed again on every step; once it gets a seed, its idle step ends (terminated, still marked
    idle) so that the vector env's autoreset starts the seeded episode on the next step.
    """

    def __init__(
        self,
        env: gym.Env,
        feed: SeedFeed | None = None,
        success_key: str | None = None,
        step_timeout: float | None = None,
    ):
        super().__init__(env)
        self.feed = feed
        self.success_key = success_key
        self.step_timeout = step_timeout
        self.seed: int | None = None
        self.block = 0
        self.idle = False
        self._steps = 0
        self._last_obs: Any = None
        self._pending_invalid: str | None = None
        self._woken_with: tuple[int, int] | None = None  # a seed taken while idle, for the next reset
        # the path's frame tap while this env is the one whose frames are shown (tui_eval.frames.hub);
        # None otherwise, so that every other env pays one attribute check per step
        self.shown: Any = None
        self._beat: list[Any] | None = None  # the stepping thread's heartbeat slot, of `_beat_of`'s
        self._beat_of: Any = None
        self._beat_thread = 0
        kept = global_rng.kept_apart()
        self._streams = global_rng.EnvStreams(kept) if kept else None

    @property
    def episode_steps(self) -> int:
        """Steps taken in the episode in progress."""
        return self._steps

    def _tag(self, info: dict[str, Any]) -> dict[str, Any]:
        info[SEED_KEY] = self.seed
        info[BLOCK_KEY] = self.block
        return info

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if self.feed is not None:
            assigned, self._woken_with = self._woken_with or self.feed.take(), None
            if assigned is None:
                self.idle = True
                if self._last_obs is None:
                    self._last_obs = self.observation_space.sample()
                return self._last_obs, {IDLE_KEY: True}
            seed, self.block = assigned
        self.idle = False
        self.seed = seed
        self._steps = 0
        self._pending_invalid = None
        streams = self._streams
        if seed is not None:
            global_rng.seed_all(seed) if streams is None else streams.seeded(seed)
        try:
            obs, info = self.env.reset(seed=seed, options=options)
        except Exception as exc:  # a broken world must not stop the run
            self._pending_invalid = f"env raised on reset: {first_line(exc)}"
            obs, info = self.observation_space.sample(), {}
        else:
            if not all_finite(obs):
                self._pending_invalid = "non-finite observation at reset"
                obs = self.observation_space.sample()
        finally:
            if streams is not None and seed is not None:
                streams.leave()
        self._last_obs = obs
        tap = getattr(self.feed, "frames", None)
        if tap is not None:
            self.shown = tap if tap.on_reset(self, (self.block, seed), obs) else None
        return obs, self._tag(dict(info))

    def _invalid(self, reason: str):
        info = self._tag({INVALID_KEY: reason, SUCCESS_KEY: False})
        if self.shown is not None:
            self.shown.on_step(self, self._last_obs, 0.0, True)
        return self._last_obs, 0.0, True, False, info

    def step(self, action):
        if self.idle:
            if self._woken_with is None and self.feed is not None:
                self._woken_with = self.feed.take()
            return self._last_obs, 0.0, self._woken_with is not None, False, {IDLE_KEY: True}
        if self._pending_invalid is not None:
            return self._invalid(self._pending_invalid)
        self._steps += 1
        if type(action) not in _INTEGER_TYPES and not all_finite(action):
            return self._invalid(f"non-finite action at step {self._steps}")
        heartbeat = None if self.feed is None else self.feed.heartbeat
        started = time.perf_counter()
        beat = None
        if heartbeat is not None:  # the engine's watchdog notices a step that never returns
            beat, thread = self._beat, get_ident()  # this thread's slot, kept: a step costs no call
            if beat is None or heartbeat is not self._beat_of or thread != self._beat_thread:
                beat = self._beat = heartbeat.slot()
                self._beat_of, self._beat_thread = heartbeat, thread
            beat[1], beat[2] = self.seed, self.block
            beat[0] = started  # last: a slot with a start is whole (feed.Heartbeat)
        streams = self._streams
        if streams is not None:
            streams.enter()
        try:
            obs, reward, terminated, truncated, info = self.env.step(action)
        except Exception as exc:  # a broken world must not stop the run: its episode is invalid
            return self._invalid(f"env raised at step {self._steps}: {first_line(exc)}")
        finally:
            if streams is not None:
                streams.leave()
            if beat is not None:
                beat[0] = None
        if self.step_timeout is not None and (took := time.perf_counter() - started) > self.step_timeout:
            return self._invalid(f"step {self._steps} took {took:.1f}s > --step-timeout {self.step_timeout:g}s")
        if not all_finite(obs):
            return self._invalid(f"non-finite observation at step {self._steps}")
        if not (math.isfinite(reward) if type(reward) is float else all_finite(reward)):
            return self._invalid(f"non-finite reward at step {self._steps}")
        self._last_obs = obs
        if terminated or truncated:
            # Readers take the seed from the reset's info and the episode's last one only: tagging every
            # step would make a vector env gather two more info arrays per step.
            info = self._tag(info)  # envs hand out a fresh info dict per step; adding our keys is harmless
            info[SUCCESS_KEY] = read_success(info, self.success_key)
        if self.shown is not None:
            self.shown.on_step(self, obs, reward, terminated or truncated)
        return obs, float(reward), bool(terminated), bool(truncated), info


def check_env_id(env_id: str) -> None:
    """Raise BadInput unless `env_id` is a registered Gymnasium env."""
    from tui_eval.errors import BadInput

    import_registrations()
    module, _, name = env_id.rpartition(":")
    if module:  # Gymnasium's "package.module:EnvId" form: importing the module registers the env
        try:
            importlib.import_module(module)
        except Exception as exc:  # importing the user's module runs its code
            raise BadInput(f"cannot import {module!r} for env {env_id!r} ({first_line(exc)}); "
                           "check the module name in --env module:EnvId") from None
    if name not in gym.registry:
        from tui_eval.user.main_block import main_block_hint

        hint = main_block_hint(name)
        if hint is not None:
            raise BadInput(hint)
        raise BadInput(
            f"env {env_id!r} is not registered with Gymnasium; pass a registered id with --env "
            "(or import the package that registers it via --env module:EnvId)"
        )


def import_registrations() -> None:
    """Register the envs tui-eval ships (demo tasks) and the Box2D family if its package is present."""
    import tui_eval.envs.point_goal  # noqa: F401  (registers on import)
