"""The process-wide generators an env may draw from, put in the episode seed's hands.

Users' envs draw from Python's `random`, NumPy's global generator and torch's default generator
(`random.uniform` at a goal, `np.random.randint` in `step`, resets and pushes from `torch.rand` in mjlab).
Such an episode is a function of its reset seed only when those generators are in a state that the seed
alone decides. So GuardedEnv seeds them (`seed_all`) right before each reset, after the policy was
loaded: what loading drew (building an OnPolicyRunner draws from torch's generator) cannot shift the
episode. Seeding all three costs ~15 µs per reset here.

One process-wide stream still mixes the draws of sub-envs stepped in turn (a vector env): the order in
which they draw decides what each gets. An env found to draw from a generator (`drawn_by`, run by the
seed probe) therefore keeps a copy of it of its own (`EnvStreams`): restored before each of its calls,
saved after. That costs per call (measured here: `random` ~55 µs, NumPy ~370 µs, torch ~10 µs), so only
the generators an env was seen to draw from are kept apart (`keep_apart`).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

GENERATORS = ("random", "numpy", "torch")

#: the generators every env of this process keeps to itself (set once per process, before envs are built)
_kept_apart: frozenset[str] = frozenset()


def keep_apart(names: Iterable[str]) -> None:
    """Envs made from now on in this process keep their own copy of these generators (see the module doc)."""
    global _kept_apart
    _kept_apart = frozenset(n for n in names if n in GENERATORS)


def kept_apart() -> frozenset[str]:
    return _kept_apart


_MASK64 = (1 << 64) - 1


def episode_seed(seed: int) -> int:
    """A 32-bit seed for the global generators, derived from the episode's seed (NumPy takes 32 bits): the
    SplitMix64 finaliser (Steele et al. 2014), so that neighbouring seeds give unrelated streams; ~1 µs."""
    z = (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (z ^ (z >> 31)) & 0xFFFFFFFF


def _torch() -> Any:
    """torch if something in the process imported it (an env that draws from it did); else None."""
    return sys.modules.get("torch")


def seed_all(seed: int) -> None:
    """Every process-wide generator in the state that `seed` decides."""
    value = episode_seed(seed)
    random.seed(value)
    np.random.seed(value)
    torch = _torch()
    if torch is not None and hasattr(torch, "default_generator"):
        torch.default_generator.manual_seed(value)  # torch.manual_seed costs ~340 µs, this ~2 µs
        if torch.cuda.is_initialized():
            torch.cuda.manual_seed_all(value)


def capture(names: Iterable[str]) -> dict[str, Any]:
    """The states of the named generators now."""
    states: dict[str, Any] = {}
    for name in names:
        if name == "random":
            states[name] = random.getstate()
        elif name == "numpy":
            states[name] = np.random.get_state()
        elif name == "torch" and (torch := _torch()) is not None:
            states[name] = (torch.get_rng_state(),
                            torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None)
    return states


def restore(states: dict[str, Any]) -> None:
    for name, state in states.items():
        if name == "random":
            random.setstate(state)
        elif name == "numpy":
            np.random.set_state(state)
        elif name == "torch" and (torch := _torch()) is not None:
            torch.set_rng_state(state[0])
            if state[1] is not None:
                torch.cuda.set_rng_state_all(state[1])


def _same(name: str, a: Any, b: Any) -> bool:
    if name == "random":
        return a == b
    if name == "numpy":
        return bool(np.array_equal(a[1], b[1]) and a[2] == b[2])
    return bool((a[0] == b[0]).all())


def drawn_by(play: Callable[[], Any], seed: int) -> frozenset[str]:
    """The generators whose state `play()` changed, started from `seed`'s state: the ones the code it runs
    draws from (or seeds)."""
    seed_all(seed)
    names = list(GENERATORS)
    before = capture(names)
    play()
    after = capture(names)
    return frozenset(n for n in before if n in after and not _same(n, before[n], after[n]))


class EnvStreams:
    """One env's own copies of the generators kept apart: `enter` before each call into the env, `leave`
    after. The first `enter` after `seeded` starts from the seed's state."""

    __slots__ = ("names", "_states", "_outside")

    def __init__(self, names: frozenset[str]):
        self.names = names
        self._states: dict[str, Any] | None = None
        self._outside: dict[str, Any] | None = None

    def seeded(self, seed: int) -> None:
        """The next call is the episode's reset: the generators start from the seed's state."""
        self._outside = capture(self.names)
        seed_all(seed)

    def enter(self) -> None:
        if self._outside is None:
            self._outside = capture(self.names)
            if self._states is not None:
                restore(self._states)

    def leave(self) -> None:
        self._states = capture(self.names)
        outside, self._outside = self._outside, None
        if outside is not None:
            restore(outside)


def describe(names: frozenset[str]) -> str:
    """One line for the run's facts."""
    base = "random, NumPy and torch global generators seeded from each episode's seed at its reset"
    if not names:
        return base
    return base + f"; the env draws from {', '.join(sorted(names))}: each env keeps its own copy"
