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

Such a VecEnv resets its worlds itself and is seeded as a whole: one seed for a batch of worlds. So
the unit that pairs across paths is (batch seed, world), and the run's seeds map onto it one to one: seed
S is world `S mod N` of the batch seeded `S - S mod N` (N worlds). The env plays batches: before each one
it is put in the batch seed's state (`_reseed`: the process-wide generators, tui_eval/envs/global_rng.py, then
the env's own `seed(s)` and `reset()` where it has them, else a new env from the factory with that seed),
every world whose seed the path was handed runs one full episode, and the other worlds' episodes are not
recorded; the batch ends when its last recorded episode does. So every batch has its own seed, whichever
path, Ray worker or restart plays it, and both paths play the same episode under the same seed.

Per world, an episode is **invalid** when its observation, reward or the policy's action is
non-finite (non-finite values are replaced by 0 before the policy or the env sees them; the world's
episode is then not recorded further), or when a step takes longer than `--step-timeout` (every
episode in flight). When `step` raises, every episode in flight is invalid and the env is closed and
rebuilt from the factory; the next batch follows. Success: a per-world boolean tensor in
`extras[success_key]` (or `extras["is_success"]` / `extras["success"]`), read for the worlds that finished;
otherwise unknown (None).
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

from tui_eval.envs import global_rng
from tui_eval.envs.guard import SUCCESS_CONVENTIONS, start_fingerprint
from tui_eval.errors import BadInput, first_line
from tui_eval.feed import Seed, SeedFeed
from tui_eval.integrations.rsl_rl.paths.eval_env import DISCARD, IDLE, LIVE, EpisodeEnd, EvalVecEnv
from tui_eval.integrations.rsl_rl.paths.manager_terms import ManagerTerms


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


def _accepted(factory: Callable[..., VecEnv], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments the factory declares (all of them for `**kwargs` or no signature)."""
    try:
        params = inspect.signature(factory).parameters
        takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        return {k: v for k, v in kwargs.items() if k == "num_envs" or takes_all or k in params}
    except (TypeError, ValueError):  # no signature (a builtin): pass everything
        return kwargs


def _call_factory(factory: Callable[..., VecEnv], kwargs: dict[str, Any]) -> VecEnv:
    return factory(**_accepted(factory, kwargs))


class FactoryVecEnv(EvalVecEnv):
    """A user's rsl_rl VecEnv (from `--vecenv module:function`), with episodes labelled by the run's seeds."""

    batched = True

    def __init__(self, factory: Callable[..., VecEnv], factory_name: str, factory_kwargs: dict[str, Any],
                 success_key: str | None = None, step_timeout: float | None = None):
        self._factory = factory
        self._factory_kwargs = factory_kwargs
        self.factory_name = factory_name
        self.success_keys = (success_key,) if success_key else SUCCESS_CONVENTIONS
        self.step_timeout = step_timeout
        self._feed: SeedFeed | None = None
        self.inner = self._build()
        self.terms = ManagerTerms.of(self.inner)
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
        self._start: list[str | None] = [None] * n  # each world's first observation in the batch, fingerprinted
        self.finished = []
        self.rebuilds = 0
        self._pending: list[Seed] = []  # seeds handed to this path for batches not played yet
        self._built_seed: int | None = int(factory_kwargs.get("seed", 0))  # the seed the env is in now
        self.batches = 0
        self.reseeding = self._reseeding()
        self.description = (f"{n} worlds from --vecenv {factory_name}, one seed per batch (seed S: world S mod {n} "
                            f"of the batch seeded S - S mod {n}; {self.reseeding})")

    def _build(self) -> VecEnv:
        try:
            env = _call_factory(self._factory, self._factory_kwargs)
        except BadInput:
            raise
        except (Exception, SystemExit) as exc:  # the user's factory may raise anything, or exit
            raise BadInput(f"--vecenv {self.factory_name} raised {first_line(exc)}") from None
        missing = [a for a in ("num_envs", "num_actions", "get_observations", "step") if not hasattr(env, a)]
        if missing:
            raise BadInput(f"--vecenv {self.factory_name} returned a {type(env).__name__} without "
                           f"{', '.join(missing)}; it must return an rsl_rl VecEnv")
        return env

    # -- rsl_rl VecEnv API (delegated)
    @property
    def unwrapped(self) -> Any:
        """The simulator's own env (a framework's runner reads and writes its state, e.g. mjlab's curriculum)."""
        return getattr(self.inner, "unwrapped", self.inner)

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

    # -- batches
    def _reseeding(self) -> str:
        """How the env is put in a batch seed's state, in words."""
        inner = self.inner
        if callable(getattr(inner, "seed", None)) and callable(getattr(inner, "reset", None)):
            return "env.seed(batch seed) and env.reset() per batch"
        if "seed" in _accepted(self._factory, self._factory_kwargs):
            return "a new env from the factory per batch, with the batch seed"
        return ("env.reset() per batch with the process-wide generators seeded (the factory takes no seed: "
                "episodes follow the seed only if the env draws from those generators)")

    def _reseed(self, seed: int) -> None:
        """The env in the state `seed` decides, every world at the start of an episode."""
        global_rng.seed_all(seed)
        inner = self.inner
        if callable(getattr(inner, "seed", None)) and callable(getattr(inner, "reset", None)):
            inner.seed(seed)
            inner.reset()
        elif "seed" in _accepted(self._factory, self._factory_kwargs):
            if self._built_seed != seed:
                self._close_inner()
                self._factory_kwargs = dict(self._factory_kwargs, seed=seed)
                self.inner = self._build()
                self.terms = ManagerTerms.of(self.inner)
        elif callable(getattr(inner, "reset", None)):
            inner.reset()
        self._built_seed = None  # an env fresh from the factory serves its first batch only
        self.batches += 1

    def _start_batch(self, now: float) -> bool:
        """The next batch: the seeds this path holds of one batch run on their worlds, the other worlds play
        unrecorded. False when the path holds no seed (every world idle)."""
        n = self.num_envs
        while len(self._pending) < n:
            assigned = None if self._feed is None else self._feed.take()
            if assigned is None:
                break
            self._pending.append((int(assigned[0]), int(assigned[1])))
        if not self._pending:
            self.state[:] = IDLE
            return False
        first_seed, block = self._pending[0]
        batch = first_seed - first_seed % n
        mine = [key for key in self._pending if key[1] == block and key[0] - key[0] % n == batch]
        self._pending = [key for key in self._pending if key not in mine]
        self._reseed(batch)
        if self.terms is not None:
            self.terms.begin()
        self.state[:] = DISCARD
        self._steps[:] = 0
        first = self.inner.get_observations()
        for seed, blk in mine:
            world = seed % n
            self.state[world], self._seed[world], self._block[world], self._t0[world] = LIVE, seed, blk, now
            self._start[world] = start_fingerprint({k: v[world] for k, v in first.items()})
        return True

    def _finish(self, i: int, success: bool | None, reason: str | None, now: float,
                termination: str | None = None, reward_terms: tuple[tuple[str, float], ...] = ()) -> None:
        self.finished.append(EpisodeEnd(i, int(self._seed[i]), int(self._block[i]),
                                        False if reason else success, reason, now - self._t0[i], self._start[i],
                                        termination, reward_terms))

    def _finish_done(self, i: int, extras: dict, now: float) -> None:
        """World i's labelled episode ended by the env's own rules: its success, and (a manager-based env) the
        term that ended it and its reward terms; the simulator's NaN guard makes it invalid."""
        terms = self.terms
        if terms is None:
            self._finish(i, self._success(extras, i), None, now)
            return
        term, sums = terms.ended(i)
        reason = (f"the simulator's NaN guard ended it (termination term {term}) at step {self._steps[i]}"
                  if terms.is_nan(term) else None)
        success = self._success(extras, i)
        if success is None and term is not None:
            success = terms.is_time_out(term)  # ran to its time limit: what a manager-based task calls surviving
        self._finish(i, success, reason, now, term, sums)

    def begin(self, feed: SeedFeed) -> TensorDict:
        self._feed = feed
        self.finished = []
        self._start_batch(time.perf_counter())
        return self.inner.get_observations()

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
        if self.terms is not None:
            self.terms.after_step()
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
        if done_np.any():
            for i in np.flatnonzero(done_np).tolist():
                if self.state[i] == LIVE:
                    self._finish_done(i, extras, now)
                    self.state[i] = DISCARD  # one episode per world and batch
        if not (self.state == LIVE).any() and self._start_batch(now):
            # every world starts the new batch's episode: the step's observations are the batch's first
            obs, dones = self.inner.get_observations(), torch.ones_like(dones, dtype=torch.bool)
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

    def _rebuild(self, error: str) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        """`step` raised: every episode in flight is invalid; close the env and build a fresh one."""
        now = time.perf_counter()
        for i in np.flatnonzero(self.state == LIVE).tolist():
            self._finish(i, False, f"env raised at step {self._steps[i]}: {error}", now)
        self._close_inner()
        self.inner = self._build()
        self.terms = ManagerTerms.of(self.inner)
        self._built_seed = int(self._factory_kwargs.get("seed", 0))
        self.rebuilds += 1
        self.state[:] = DISCARD
        self._start_batch(now)
        n = self.num_envs
        obs = self.inner.get_observations()
        dev = self.device
        return (obs, torch.zeros(n, device=dev), torch.ones(n, dtype=torch.bool, device=dev),
                {"time_outs": torch.zeros(n, dtype=torch.bool, device=dev)})

    def _close_inner(self) -> None:
        try:
            close = getattr(self.inner, "close", None)
            if callable(close):
                close()
        except Exception:  # closing is best effort: the env failed or the run is over
            pass

    def close(self) -> None:
        self._close_inner()

