"""What a path offers the doctor: a replay of one seed (`Trace`) and what can be run again of it (`Side`).

A path's `replay(seed)` plays one episode on `seed` and records, per step, the stages it can show: `obs` (from
the env), `env_to_module` (what the policy network sees), `module_out` (its output: action distribution inputs),
`action` (as the policy gave it) and `action_for_env` (what the env was sent). A path's `rerun(trace)` gives the
parts the doctor's counterfactual probes run again, on copies (the built path is left as it was):

- `stepper()`: a copy of the policy as it stood at the start of the replayed episode (an object with
  `reset()` and `act(obs)`, `obs` as the env gave it, returning the action the path sends to the env);
- `fresh()`: the policy built afresh (a `--path` factory called again);
- `head(z)`: the action from an already normalized observation (the `env_to_module` stage);
- `logits(z)`: the network's output (`module_out`) from the `env_to_module` stage;
- `stats`: the observation normalizer's (mean, std), where the path exposes one;
- `variant(change)`: like `stepper`, on copies of the policy's RLlib parts (module, env-to-module and
  module-to-env pipelines) that `change` may alter first (the doctor puts another path's setting in); `parts`
  are the live ones, read only.

A library's paths implement both in its own package; the doctor calls them through `InferencePath` alone.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

BATCH_ROWS = 1024  # inputs a pure policy is fed in one call, at most
STAGES = ("obs", "env_to_module", "module_out", "action", "action_for_env")
#: two stages' values are the same to this tolerance (a replay's and a probe's)
ATOL, RTOL = 1e-5, 1e-5


def close(a: Any, b: Any, atol: float = ATOL, rtol: float = RTOL) -> bool:
    """Equal as arrays to the tolerance (same shape), or equal as objects where they are not numbers."""
    try:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return a == b
    return x.shape == y.shape and bool(np.allclose(x, y, atol=atol, rtol=rtol))


@dataclass
class Trace:
    path: str
    stages: dict[str, list[Any]] = field(default_factory=dict)  # stage -> value per step
    ret: float = 0.0
    length: int = 0
    end: str = ""  # "terminated" | "truncated" | "invalid: ..." | ""
    note: str = ""
    snapshot: Any = None  # an act-form custom policy as it stood before the episode (a deep copy)
    #: the observations as the env gave them where they are not one array (a Dict): what a policy is fed again
    inputs: list[Any] | None = None

    @property
    def env_actions(self) -> list[Any]:
        return self.stages.get("action_for_env", [])

    def keep_input(self, obs: Any) -> None:
        """Record `obs` as the env gave it (only a Dict observation needs it: its `obs` stage is flattened)."""
        if isinstance(obs, dict):
            self.inputs = self.inputs if self.inputs is not None else []
            self.inputs.append(copy.deepcopy(obs))


class Stateless:
    """A pure policy function as a stepper; `many`, where given, the same function on a list of inputs at once
    (one batched call instead of one call per input: the same actions, up to the rounding of a batched product)."""

    def __init__(self, fn: Callable[[Any], np.ndarray],
                 many: Callable[[Sequence[Any]], list[np.ndarray]] | None = None):
        self.fn, self.many = fn, many

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> np.ndarray:
        return self.fn(obs)

    def act_batch(self, observations: Sequence[Any]) -> list[np.ndarray]:
        if self.many is None:
            return [np.asarray(self.fn(obs)) for obs in observations]
        out: list[np.ndarray] = []
        for start in range(0, len(observations), BATCH_ROWS):
            out += [np.asarray(action) for action in self.many(observations[start:start + BATCH_ROWS])]
        return out


@dataclass
class Side:
    name: str
    trace: Trace
    explore: bool | None = None
    stateless: bool = False  # the stepper's action depends on the current input only
    stepper: Callable[[], Any] | None = None
    fresh: Callable[[], Any] | None = None
    head: Callable[[np.ndarray], np.ndarray] | None = None
    logits: Callable[[np.ndarray], np.ndarray] | None = None
    stats: tuple[np.ndarray, np.ndarray] | None = None
    action_space: Any = None
    variant: Callable[[Callable[[Any, Any, Any], None]], Callable[[], Any]] | None = None
    parts: tuple[Any, Any, Any] = (None, None, None)
    notes: list[str] = field(default_factory=list)

    def stage(self, name: str, t: int) -> np.ndarray | None:
        values = self.trace.stages.get(name, [])
        return np.asarray(values[t]) if t < len(values) else None

    def steps(self, name: str) -> list[Any]:
        return self.trace.stages.get(name, [])

    def inputs(self) -> list[Any]:
        """The observations to feed the policy again: as the env gave them (a Dict stays a Dict)."""
        return self.trace.inputs if self.trace.inputs is not None else self.steps("obs")


def run_policy(make: Callable[[], Any], history: Sequence[Any], window: Sequence[Any],
               mutate: Callable[[Any], None] | None = None, reset_each_step: bool = False,
               batched: bool = False) -> list[np.ndarray]:
    """A new stepper from `make`, fed `history` (its episode so far), then the actions it gives on `window`;
    `batched`: a pure function's (`act_batch`) on the whole window in batched calls, for a caller that compares
    actions within a tolerance (a batched product may round otherwise than a row alone)."""
    import torch

    stepper = make()
    if mutate is not None:
        mutate(stepper)
    with torch.no_grad():
        if hasattr(stepper, "reset"):
            stepper.reset()
        if batched and not history and mutate is None and hasattr(stepper, "act_batch"):
            return stepper.act_batch(window)
        for obs in history:
            stepper.act(obs)
        out = []
        for obs in window:
            if reset_each_step and hasattr(stepper, "reset"):
                stepper.reset()
            out.append(np.asarray(stepper.act(obs)))
    return out


class OneSeed:
    """A SeedFeed handing out one seed (nobody watches its steps)."""

    cancelled = False
    heartbeat = None

    def __init__(self, seed: int):
        self.left = [(seed, 0)]

    def take(self):
        return self.left.pop() if self.left else None


def first_row(batch: Any) -> Any:
    """Row 0 of a batch, also of a Dict observation's batch (one array per key)."""
    if isinstance(batch, dict):
        return {k: first_row(v) for k, v in batch.items()}
    return batch[0]


def flat(value: Any) -> np.ndarray:
    """An observation as one array (a Dict observation's parts, e.g. an action mask and the observation, in key
    order), copied: what the replay's stages compare."""
    if isinstance(value, dict):
        return np.concatenate([flat(value[k]).reshape(-1).astype(float) for k in sorted(value)])
    return np.array(value, copy=True)


# ------------------------------------------------------------------------------------------- multi-agent
@dataclass
class MultiTrace:
    """A multi-agent path's replay: per env step, the actions by agent ID it sent; each module's return."""

    path: str
    actions: list[dict[Any, Any]] = field(default_factory=list)  # per env step: agent ID -> action sent
    modules: dict[str, float] = field(default_factory=dict)  # module ID -> return
    note: str = ""

    @property
    def replayed(self) -> bool:
        return bool(self.actions)


def first_action_divergence(a: MultiTrace, b: MultiTrace) -> tuple[int, dict[str, Any]] | None:
    """(step, {path: that step's actions}) where two traces first send other actions (or end apart); None
    when they send the same actions throughout."""
    for t in range(max(len(a.actions), len(b.actions))):
        sa = a.actions[t] if t < len(a.actions) else None
        sb = b.actions[t] if t < len(b.actions) else None
        if sa is None or sb is None or sa.keys() != sb.keys() or not all(close(sa[k], sb[k]) for k in sa):
            return t, {a.path: plain(sa), b.path: plain(sb)}
    return None


def plain(actions: dict[Any, Any] | None) -> Any:
    if actions is None:
        return "episode over"
    return {str(agent): np.asarray(a).tolist() for agent, a in actions.items()}


@runtime_checkable
class AgentMapping(Protocol):
    """A multi-agent path that maps agents to modules by the checkpoint's function, and can replay a seed under
    another mapping (the doctor's mapping probe)."""

    def own_mapping(self, agents: Sequence[Any]) -> dict[Any, str]: ...

    def mapping_for(self, loop: MultiTrace, seed: int, module_ids: Sequence[str]) -> dict[Any, str] | None: ...


RECURRENT = ("LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell")


def reachable_modules(obj: Any, depth: int = 4) -> list[Any]:
    """torch nn.Modules reachable from `obj` (attributes, lists, dicts), outermost first."""
    import torch

    found: list[Any] = []
    seen: set[int] = set()

    def visit(o: Any, level: int) -> None:
        if o is None or id(o) in seen or level > depth or isinstance(o, (str, bytes, int, float, np.ndarray)):
            return
        seen.add(id(o))
        if isinstance(o, torch.nn.Module):
            found.append(o)
            return
        children: list[Any] = []
        if hasattr(o, "__dict__") and not isinstance(o, type):
            children.extend(vars(o).values())
        if isinstance(o, (list, tuple)):
            children.extend(o)
        if isinstance(o, dict):
            children.extend(o.values())
        for child in children:
            visit(child, level + 1)

    visit(obj, 0)
    return found


def holds_recurrent_module(obj: Any) -> bool:
    """Whether a torch recurrent layer (also a scripted one) is reachable from `obj`."""
    return any(getattr(sub, "original_name", type(sub).__name__) in RECURRENT
               for module in reachable_modules(obj) for sub in module.modules())
