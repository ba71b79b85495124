"""Does an env repeat itself from its reset seed? Checked before a run, because an exact comparison rests on it.

With explore off on both paths, tui-eval calls one differing seed conclusive ("DIFFER (exact)"). That holds
only when an episode is a function of its reset seed and the actions. An env that draws from an unseeded
generator (`np.random.randint` in `step`, as RLlib's own `CartPoleWithDictObservationSpace` does, or
`random.random()`, or the wall clock) gives other episodes on the same seed, and the exact verdict would then
report the env, not the paths. So two episodes are played from `reset(seed=S)` with the same seeded random
actions; where they part, the comparison is made statistical (its intervals do not need repeatable seeds).

The probe plays as the run does: the process-wide generators seeded from the seed before the reset
(tui_eval/envs/global_rng.py), actions the env accepts (an `action_mask` in the observation is honoured), and two
envs stepped in turn, as sub-envs of a vector are, each of which must give the episode it gives alone. It also
notes which process-wide generators the env draws from (`SeedCheck.draws`): the run keeps those apart per env.
An env that raises before the two episodes part is not judged (`repeats` None): no comparison is exact then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from tui_eval.envs import global_rng

#: steps of each probe episode: enough for a per-step random draw to show, cheap next to loading a policy
PROBE_STEPS = 50
PROBE_SEED = 12345
#: a probe that takes longer (a frozen or very slow simulator) is abandoned and the env not judged
PROBE_SECONDS = 5.0


def _flat(space: gym.Space, obs: Any) -> np.ndarray:
    try:
        return np.asarray(gym.spaces.flatten(space, obs), dtype=np.float64)
    except Exception:  # a space flatten does not know: compare what numpy makes of it
        return np.asarray(obs, dtype=object).ravel()


Trace = list[tuple[np.ndarray, float]]


def _action(env: gym.Env, obs: Any) -> Any:
    """A random action the env accepts: masked by the observation's `action_mask` where it has one."""
    mask = obs.get("action_mask") if isinstance(obs, dict) else None
    space = env.action_space
    if mask is not None and isinstance(space, gym.spaces.Discrete):
        mask = np.asarray(mask, dtype=np.int8)
        if mask.shape == (space.n,) and mask.any():
            return space.sample(mask=mask)
    return space.sample()


class _Episode:
    """One probe episode, stepped a step at a time (so two can be stepped in turn); `trace` grows as it goes."""

    def __init__(self, make_env: Callable[[], gym.Env], seed: int, streams: frozenset[str] | None,
                 seeded: bool = False):
        self.env = make_env()
        self.streams = global_rng.EnvStreams(streams) if streams else None
        self.env.action_space.seed(seed)
        if seeded:  # the caller put the generators in the seed's state (to see what the env draws)
            pass
        elif self.streams is None:
            global_rng.seed_all(seed)
        else:
            self.streams.seeded(seed)
        try:
            obs, _ = self.env.reset(seed=seed)
        finally:
            if self.streams is not None:
                self.streams.leave()
        self.obs = obs
        self.trace: Trace = [(_flat(self.env.observation_space, obs), 0.0)]
        self.done = False

    def step(self) -> None:
        if self.streams is not None:
            self.streams.enter()
        try:
            obs, reward, terminated, truncated, _ = self.env.step(_action(self.env, self.obs))
        finally:
            if self.streams is not None:
                self.streams.leave()
        self.obs = obs
        self.trace.append((_flat(self.env.observation_space, obs), float(reward)))
        self.done = bool(terminated or truncated)


def _play(episodes: list[_Episode], steps: int) -> None:
    """Step the episodes in turn until each ended or took `steps` steps."""
    for _ in range(steps):
        live = [e for e in episodes if not e.done]
        if not live:
            return
        for episode in live:
            episode.step()


def _trace(make_env: Callable[[], gym.Env], seed: int, steps: int, traces: list[Trace],
           streams: frozenset[str] | None = None, seeded: bool = False) -> None:
    """One episode alone; its trace is appended to `traces` before it is played, so a probe that raises
    part-way leaves what it saw."""
    episode = _Episode(make_env, seed, streams, seeded)
    traces.append(episode.trace)
    try:
        _play([episode], steps)
    finally:
        episode.env.close()


@dataclass
class _Probe:
    alone: list[Trace]  # two episodes of one seed, alone
    draws: frozenset[str] = frozenset()
    in_turn: list[Trace] | None = None  # the seed and seed + 1 stepped in turn
    other_alone: list[Trace] | None = None  # seed + 1 alone
    error: str | None = None


def _run_probe(make_env: Callable[[], gym.Env], seed: int, steps: int) -> _Probe:
    probe = _Probe(alone=[])
    try:
        probe.draws = global_rng.drawn_by(lambda: _trace(make_env, seed, steps, probe.alone, seeded=True), seed)
        _trace(make_env, seed, steps, probe.alone)
        probe.other_alone = []
        _trace(make_env, seed + 1, steps, probe.other_alone, probe.draws)
        pair = [_Episode(make_env, seed, probe.draws), _Episode(make_env, seed + 1, probe.draws)]
        probe.in_turn = [e.trace for e in pair]
        try:
            _play(pair, steps)
        finally:
            for episode in pair:
                episode.env.close()
    except Exception as exc:  # the env broke: what was seen so far is still compared
        probe.error = f"{type(exc).__name__}: {exc}"
    return probe


def _probe_within(make_env: Callable[[], gym.Env], seed: int, steps: int, seconds: float) -> _Probe | None:
    """The probe, played in a daemon thread so a step that never returns cannot hold the run."""
    result: list[_Probe] = []
    thread = threading.Thread(target=lambda: result.append(_run_probe(make_env, seed, steps)),
                              name="tui-eval-seed-probe", daemon=True)
    thread.start()
    thread.join(seconds)
    return result[0] if result else None


@dataclass(frozen=True)
class SeedCheck:
    """What the probe found: `repeats` True, False, or None (not checked: no single env to make, it broke or
    took too long); `line` says it for the facts shown before a run."""

    repeats: bool | None
    line: str
    #: the process-wide generators the env was seen to draw from (tui_eval/envs/global_rng.py)
    draws: frozenset[str] = frozenset()


NOT_CHECKED = SeedCheck(None, "not checked (no single env to probe, or it took over 5 s): a differing seed is "
                              "called exact only once replayed on each path alone")
REPEATS = SeedCheck(True, "repeats itself from its reset seed (checked: two episodes, same seed and actions)")


def check_seed_repeat(make_env: Callable[[], gym.Env], name: str, seed: int = PROBE_SEED,
                      steps: int = PROBE_STEPS) -> SeedCheck:
    """Two episodes from `reset(seed)` with the same seeded actions, compared for `steps` steps; then the
    seed stepped in turn with another, compared with it alone."""
    probe = _probe_within(make_env, seed, steps, PROBE_SECONDS)
    if probe is None:  # too slow to probe: the paths will report such an env; not judged here
        return NOT_CHECKED
    draws = probe.draws
    parted = f"{name} is not a function of its reset seed: two episodes from reset(seed={seed}) with the same actions"
    if len(probe.alone) == 2:
        why = _parting(probe.alone[0], probe.alone[1], complete=probe.error is None)
        if why:
            return _differs(f"{parted} {why}", draws)
    if probe.error is not None or probe.in_turn is None or probe.other_alone is None:
        return SeedCheck(None, f"not checked: the env raised while probed ({probe.error}); no comparison is exact",
                         draws)
    in_turn = f"{name} gives another episode when stepped in turn with a second env (as sub-envs of a vector are)"
    for alone, mixed in ((probe.alone[0], probe.in_turn[0]), (probe.other_alone[0], probe.in_turn[1])):
        why = _parting(alone, mixed, complete=True)
        if why:
            return _differs(f"{in_turn}: it {why}", draws)
    return SeedCheck(True, REPEATS.line, draws)


def _same_obs(obs_a: np.ndarray, obs_b: np.ndarray) -> bool:
    return obs_a.shape == obs_b.shape and (
        np.array_equal(obs_a, obs_b, equal_nan=True) if obs_a.dtype != object else bool(np.all(obs_a == obs_b)))


def _parting(first: Trace, second: Trace, complete: bool) -> str | None:
    """Where two traces of one seed part ("gave another observation at step 3"); None when they agree (on the
    steps both have, and in length when both are `complete`)."""
    for step, ((obs_a, r_a), (obs_b, r_b)) in enumerate(zip(first, second, strict=False)):
        same_obs = _same_obs(obs_a, obs_b)
        if not same_obs or not (r_a == r_b or (np.isnan(r_a) and np.isnan(r_b))):
            return f"gave another {'observation' if not same_obs else 'reward'} at step {step}"
    if complete and len(first) != len(second):
        return f"ended after {len(first) - 1} and {len(second) - 1} steps"
    return None


def _differs(why: str, draws: frozenset[str] = frozenset()) -> SeedCheck:
    return SeedCheck(False, f"{why}; the comparison is statistical, not exact per seed", draws)
