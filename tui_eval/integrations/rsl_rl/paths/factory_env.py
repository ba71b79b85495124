"""rsl_rl VecEnvs from a user factory, with episodes labelled by the run's seeds.

`FactoryVecEnv` (from `--vecenv module:function`) is how Isaac Lab or any
other simulator that already speaks rsl_rl plugs in. The factory is called with keyword arguments::

    factory(num_envs: int, device: str, seed: int, env_id: str | None, env_config: dict,
            agent_cfg: dict) -> rsl_rl.env.VecEnv

`num_envs` is always passed; the others only when the function declares them (or takes `**kwargs`).
`seed` is the first seed of the run's held-out block, `env_id`/`env_config` what the user passed
(`--env`, `--env-config`) or the checkpoint's cfg named, `agent_cfg` the rsl_rl runner cfg
(e.g. for `clip_actions`). The factory is called once per inference path (each path steps its own
env), and again after the env raised.

Such a VecEnv resets its worlds itself, so per-world seeding is the factory's business: tui-eval
cannot put a seed into a world. It *labels* episodes instead: when a world starts an episode, the next
seed of the run's block is recorded as that episode's seed (worlds in index order at the start, then
in the order they finish; several worlds finishing in the same step take seeds in world order). For a
deterministic simulator seeded with `seed`, both paths then see the same episode under the same
label. Per world, an episode is **invalid** when its observation, reward or the policy's action is
non-finite (non-finite values are replaced by 0 before the policy or the env sees them; the world's
current episode is then discarded until the env ends it, or given up after the env's
`max_episode_length` steps), or when a step takes longer than `--step-timeout` (every episode in
flight). When `step` raises, every episode in flight is invalid and the env is closed and rebuilt from
the factory (with the same arguments: from then on this path's labels no longer pair with another
path's). Success: a per-world boolean tensor in `extras[success_key]` (or `extras["is_success"]` /
`extras["success"]`), read for the worlds that finished; otherwise unknown (None). At `begin` after a
first run, the env is reset with its `reset()` if it has one; without it, worlds join with their next
episode.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from tui_eval.envs import SUCCESS_CONVENTIONS
from tui_eval.errors import first_line
from tui_eval.feed import SeedFeed
from tui_eval.integrations.rsl_rl.paths.eval_env import DISCARD, IDLE, LIVE, EpisodeEnd, EvalVecEnv
from tui_eval.spec import BadInput


def resolve_factory(text: str) -> Callable[..., VecEnv]:
    """`module:function` → the function; BadInput (one line) when it cannot be imported."""
    module_name, sep, attr = text.partition(":")
    if not sep or not module_name or not attr:
        raise BadInput(f"--vecenv expects module:function (e.g. my_pkg.envs:make_vecenv), got {text!r}")
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # the current directory, as `python -m` would
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except BadInput:
        raise
    except Exception as exc:  # importing the user's module runs its code
        raise BadInput(f"--vecenv {text}: cannot import it ({first_line(exc)}); pass module:function "
                       "importable from the current directory or the environment") from None
    if not callable(obj):
        raise BadInput(f"--vecenv {text} is not callable; pass a function returning an rsl_rl VecEnv")
    return obj


def _call_factory(factory: Callable[..., VecEnv], kwargs: dict[str, Any]) -> VecEnv:
    try:
        params = inspect.signature(factory).parameters
        takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        call = {k: v for k, v in kwargs.items() if k == "num_envs" or takes_all or k in params}
    except (TypeError, ValueError):  # no signature (a builtin): pass everything
        call = kwargs
    return factory(**call)


class FactoryVecEnv(EvalVecEnv):
    """A user's rsl_rl VecEnv (from `--vecenv module:function`), with episodes labelled by the run's seeds."""

    def __init__(self, factory: Callable[..., VecEnv], factory_name: str, factory_kwargs: dict[str, Any],
                 success_key: str | None = None, step_timeout: float | None = None):
        self._factory = factory
        self._factory_kwargs = factory_kwargs
        self.factory_name = factory_name
        self.success_keys = (success_key,) if success_key else SUCCESS_CONVENTIONS
        self.step_timeout = step_timeout
        self._feed: SeedFeed | None = None
        self.inner = self._build()
        self.num_envs = int(self.inner.num_envs)
        self.num_actions = int(self.inner.num_actions)
        self.device = self.inner.device
        self.cfg = getattr(self.inner, "cfg", {})
        n = self.num_envs
        self.state = np.full(n, IDLE, dtype=np.int8)
        self._seed = np.zeros(n, dtype=np.int64)
        self._block = np.zeros(n, dtype=np.int64)
        self._steps = np.zeros(n, dtype=np.int64)  # steps of the current episode (LIVE) or discarded ones
        self._t0 = np.zeros(n)
        self.finished = []
        self.rebuilds = 0
        self.description = f"{n} worlds from --vecenv {factory_name}"

    def _build(self) -> VecEnv:
        try:
            env = _call_factory(self._factory, self._factory_kwargs)
        except BadInput:
            raise
        except Exception as exc:  # the user's factory may raise anything
            raise BadInput(f"--vecenv {self.factory_name} raised {first_line(exc)}") from None
        missing = [a for a in ("num_envs", "num_actions", "get_observations", "step") if not hasattr(env, a)]
        if missing:
            raise BadInput(f"--vecenv {self.factory_name} returned a {type(env).__name__} without "
                           f"{', '.join(missing)}; it must return an rsl_rl VecEnv")
        self._fresh = True
        return env

    # -- rsl_rl VecEnv API (delegated)
    @property
    def max_episode_length(self):
        return self.inner.max_episode_length

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.inner.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self.inner.episode_length_buf = value

    def get_observations(self) -> TensorDict:
        return self.inner.get_observations()

    # -- labels
    def _label(self, i: int, now: float) -> None:
        assigned = None if self._feed is None else self._feed.take()
        if assigned is None:
            self.state[i] = IDLE
            return
        self._seed[i], self._block[i] = assigned
        self.state[i] = LIVE
        self._steps[i] = 0
        self._t0[i] = now

    def _finish(self, i: int, success: bool | None, reason: str | None, now: float) -> None:
        self.finished.append(EpisodeEnd(i, int(self._seed[i]), int(self._block[i]),
                                        False if reason else success, reason, now - self._t0[i]))

    def begin(self, feed: SeedFeed) -> TensorDict:
        self._feed = feed
        self.finished = []
        now = time.perf_counter()
        obs = None
        if not self._fresh and callable(getattr(self.inner, "reset", None)):
            out = self.inner.reset()
            obs = out[0] if isinstance(out, tuple) else out
            self._fresh = True
        if self._fresh:
            for i in range(self.num_envs):
                self._label(i, now)
        else:  # cannot restart the worlds: each joins with its next episode
            self.state[:] = DISCARD
            self._steps[:] = 0
        self._fresh = False
        return obs if isinstance(obs, TensorDict) else self.inner.get_observations()

    def end(self) -> None:
        self._feed = None

    def _success(self, extras: dict, i: int) -> bool | None:
        for key in self.success_keys:
            value = extras.get(key)
            if isinstance(value, torch.Tensor) and value.numel() == self.num_envs:
                return bool(value.reshape(-1)[i])
        return None

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        self.finished = []
        n = self.num_envs
        live = self.state == LIVE
        # non-finite actions: invalid, and the world gets zeros instead
        ok_action = torch.isfinite(actions).reshape(n, -1).all(dim=1)
        bad_action = None
        if not bool(ok_action.all()):
            bad_action = ~ok_action.cpu().numpy()
            actions = torch.where(ok_action.unsqueeze(-1), actions, torch.zeros_like(actions))
        self._steps += self.state != IDLE
        heartbeat = None if self._feed is None else self._feed.heartbeat
        if heartbeat is not None:  # the engine's watchdog notices a step that never returns
            heartbeat.step_started(None, -1)  # all worlds step at once: no one world to blame
        started = time.perf_counter()
        try:
            obs, rew, dones, extras = self.inner.step(actions)
        except Exception as exc:  # the user's env failed: its worlds are rebuilt, their episodes invalid
            return self._rebuild(f"{first_line(exc)}")
        finally:
            if heartbeat is not None:
                heartbeat.step_ended()
        now = time.perf_counter()
        reason: list[str | None] = [None] * n
        if bad_action is not None:
            for i in np.flatnonzero(bad_action & live).tolist():
                reason[i] = f"non-finite action at step {self._steps[i]}"
        took = now - started
        if self.step_timeout is not None and took > self.step_timeout:
            for i in np.flatnonzero(live).tolist():
                reason[i] = reason[i] or (f"step {self._steps[i]} took {took:.1f}s > --step-timeout "
                                          f"{self.step_timeout:g}s")
        obs, rew = self._zero_non_finite(obs, rew, live, reason)
        done_np = dones.reshape(n).cpu().numpy().astype(bool)
        for i in range(n) if any(reason) else []:
            if reason[i] is not None and self.state[i] == LIVE:
                self._finish(i, False, reason[i], now)
                self.state[i] = DISCARD  # the env ends this episode when it will; it is not recorded
                self._steps[i] = 0
        if done_np.any():
            for i in np.flatnonzero(done_np).tolist():
                if self.state[i] == LIVE:
                    self._finish(i, self._success(extras, i), None, now)
                if self.state[i] != IDLE:
                    self._label(i, now)
        # a discarded episode that the env never ends (a world stuck in NaN without a time limit) must not keep
        # the run alive: past the env's max_episode_length, give the world up
        stuck = (self.state == DISCARD) & (self._steps > self._max_steps)
        if stuck.any():
            self.state[stuck] = IDLE
        return obs, rew, dones, extras

    def _zero_non_finite(self, obs: TensorDict, rew: torch.Tensor, live: np.ndarray,
                         reason: list[str | None]) -> tuple[TensorDict, torch.Tensor]:
        """Non-finite observations or rewards, per world: the live world's episode is invalid (noted in
        `reason`), and the values become 0 before the policy sees them."""
        n = self.num_envs
        ok = torch.isfinite(rew).reshape(n)
        ok_obs = torch.ones(n, dtype=torch.bool, device=ok.device)
        for value in obs.values():
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                ok_obs &= torch.isfinite(value).reshape(n, -1).all(dim=1)
        if bool((ok & ok_obs).all()):
            return obs, rew
        bad_obs, bad_rew = (~ok_obs).cpu().numpy(), (~ok).cpu().numpy()
        for i in np.flatnonzero((bad_obs | bad_rew) & live).tolist():
            what = "observation" if bad_obs[i] else "reward"
            reason[i] = reason[i] or f"non-finite {what} at step {self._steps[i]}"
        rew = torch.where(ok, rew.reshape(n), torch.zeros_like(rew.reshape(n)))
        obs = obs.clone()
        for key, value in obs.items():
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                obs[key] = torch.nan_to_num(value, nan=0.0, posinf=0.0, neginf=0.0)
        return obs, rew

    @property
    def _max_steps(self) -> int:
        limit = getattr(self.inner, "max_episode_length", None)
        try:
            return int(limit.max()) if isinstance(limit, torch.Tensor) else int(limit)  # type: ignore[arg-type]
        except (TypeError, ValueError):  # no limit, or not a number
            return 10**9

    def _rebuild(self, error: str) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        """`step` raised: every episode in flight is invalid; close the env and build a fresh one."""
        now = time.perf_counter()
        for i in np.flatnonzero(self.state == LIVE).tolist():
            self._finish(i, False, f"env raised at step {self._steps[i]}: {error}", now)
        try:
            self.inner.close()
        except Exception:  # the env already failed; closing it is best effort
            pass
        self.inner = self._build()
        self.rebuilds += 1
        self._fresh = False
        for i in range(self.num_envs):
            if self.state[i] != IDLE:
                self._label(i, now)
        n = self.num_envs
        obs = self.inner.get_observations()
        dev = self.device
        return (obs, torch.zeros(n, device=dev), torch.ones(n, dtype=torch.bool, device=dev),
                {"time_outs": torch.zeros(n, dtype=torch.bool, device=dev)})

    def close(self) -> None:
        try:
            close = getattr(self.inner, "close", None)
            if callable(close):
                close()
        except Exception:  # closing is best effort: the run is over
            pass

