"""What the doctor can run again of one path, at the steps where it parted from another.

A `Side` wraps one replayed path: its trace, and where the path allows it, a way to run its policy
once more on inputs the doctor chooses:

- `stepper()`: a copy of the policy as it stood at the start of the replayed episode (an object with
  `reset()` and `act(obs)`, `obs` as the trace's `obs` stage holds it, returning the action the path
  sends to the env); built-in MLP paths are stateless, a built-in recurrent one (rsl_rl's runner or
  TorchScript export, RLlib's LSTM module) starts from its initial state as the path does at an
  episode's start, an act-form custom path is deep-copied;
- `fresh()`: the policy built afresh (a custom path's factory called again);
- `head(z)`: the action from an already normalized observation (the `env_to_module` stage);
- `logits(z)`: the module's output (`module_out`) from the `env_to_module` stage;
- `stats`: the observation normalizer's (mean, std), where the path exposes one;
- `variant(change)`: like `stepper`, on copies of the policy's RLlib parts (module, env-to-module and
  module-to-env pipelines) that `change` may alter first (tui_eval/doctor/swaps.py puts another path's
  setting in); `parts` are the live ones, read only.

Everything here works on copies or under no_grad: the built path is left as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tui_eval.doctor.replay import Trace
from tui_eval.doctor.static_diff import Probe


class _Stateless:
    """A pure policy function as a stepper."""

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray]):
        self.fn = fn

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> np.ndarray:
        return self.fn(obs)


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
               mutate: Callable[[Any], None] | None = None, reset_each_step: bool = False) -> list[np.ndarray]:
    """A new stepper from `make`, fed `history` (its episode so far), then the actions it gives on `window`."""
    import torch

    stepper = make()
    if mutate is not None:
        mutate(stepper)
    with torch.no_grad():
        if hasattr(stepper, "reset"):
            stepper.reset()
        for obs in history:
            stepper.act(obs)
        out = []
        for obs in window:
            if reset_each_step and hasattr(stepper, "reset"):
                stepper.reset()
            out.append(np.asarray(stepper.act(obs)))
    return out


def build_side(pr: Probe, trace: Trace) -> Side:
    """The re-runnable parts of a replayed path (those its kind allows)."""
    side = Side(pr.name, trace, explore=pr.explore)
    try:
        if pr.kind == "custom":
            _custom(side, pr)
        elif pr.module is not None and pr.module_to_env is not None:
            _rllib(side, pr)
        elif hasattr(getattr(pr.path, "env", None), "state"):
            _rsl(side, pr)
    except Exception as exc:  # a part the doctor cannot rerun is left out, never fatal
        side.notes.append(f"cannot rerun {pr.name}'s policy: {type(exc).__name__}: {exc}")
    return side


def _custom(side: Side, pr: Probe) -> None:
    path = pr.custom
    snapshot = side.trace.snapshot
    if path.form == "act" and snapshot is not None:
        side.stepper = lambda: copy.deepcopy(snapshot)
        if path.remake is not None:
            side.fresh = lambda: path.remake(bool(pr.explore))
    if pr.module is not None:
        side.logits = _module_logits(pr.module, bool(pr.explore))
    side.action_space = path.env.action_space
    if path.form == "act" and snapshot is not None:
        side.parts = (pr.module, pr.env_to_module, pr.module_to_env)

        def variant(change: Callable[[Any, Any, Any], None]) -> Callable[[], Any]:
            from tui_eval.doctor.static_diff import find_live

            def make() -> Any:
                policy = copy.deepcopy(snapshot)
                found = find_live(policy)
                change(found["module"], found["env_to_module"], found["module_to_env"])
                return policy
            return make

        side.variant = variant


def _module_logits(module: Any, explore: bool) -> Callable[[np.ndarray], np.ndarray]:
    import torch
    from ray.rllib.core.columns import Columns

    def logits(z: np.ndarray) -> np.ndarray:
        batch = {Columns.OBS: torch.as_tensor(np.asarray(z, dtype=np.float32))[None]}
        with torch.no_grad():
            out = module._forward_exploration(batch) if explore else module._forward_inference(batch)
        return out[Columns.ACTION_DIST_INPUTS][0].detach().cpu().numpy()

    return logits


def _rllib(side: Side, pr: Probe) -> None:
    """RLlib's built-in paths: the module and module_to_env on a one-step episode."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode

    module, e2m, m2e, explore = pr.module, pr.env_to_module, pr.module_to_env, bool(pr.explore)
    assert pr.make_env is not None
    env = pr.make_env()
    spaces = env.observation_space, env.action_space
    env.close()
    side.action_space = spaces[1]
    dict_obs = type(spaces[0]).__name__ == "Dict"
    if dict_obs:  # its stages hold Dict observations flattened: not what its module takes
        side.notes.append(f"{pr.name}: Dict observations: the probes that rerun its module on its env_to_module "
                          "output are skipped; those that rerun the whole policy on its observations run")
    else:
        side.logits = _module_logits(module, explore)

    def head(z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float32)
        episode = SingleAgentEpisode(observation_space=spaces[0], action_space=spaces[1])
        episode.add_env_reset(observation=z)
        shared: dict[str, Any] = {}  # env_to_module leaves here what module_to_env needs to unbatch
        if e2m is not None:
            copy.deepcopy(e2m)(rl_module=module, episodes=[episode], batch={}, explore=explore, shared_data=shared)
        batch = {Columns.OBS: torch.as_tensor(z)[None]}
        with torch.no_grad():
            out = module._forward_exploration(batch) if explore else module._forward_inference(batch)
        out = copy.deepcopy(m2e)(rl_module=module, batch=out, episodes=[episode], explore=explore, shared_data=shared)
        return np.asarray(out.get(Columns.ACTIONS_FOR_ENV, out[Columns.ACTIONS])[0])

    if not dict_obs:
        side.head = head
    side.parts = (module, e2m, m2e)

    def variant(change: Callable[[Any, Any, Any], None]) -> Callable[[], Any]:
        def make() -> Any:
            parts = copy.deepcopy((module, e2m, m2e))
            change(*parts)
            return _RllibEpisodeStepper(*parts, spaces, explore)
        return make

    side.variant = variant
    if module.is_stateful() or dict_obs:  # an LSTM (the head alone would start from the initial state on every
        # call), or a Dict observation the pipeline turns into the module's input
        side.stepper = lambda: _RllibEpisodeStepper(module, e2m, m2e, spaces, explore)
        return
    obs, normalized = side.steps("obs"), side.steps("env_to_module")
    if obs and all(np.asarray(o).shape == np.asarray(z).shape and np.allclose(o, z) for o, z in zip(obs, normalized)):
        side.stateless = True  # its env_to_module passes observations through: the head is the whole policy
        side.stepper = lambda: _Stateless(head)


class _RllibEpisodeStepper:
    """An RLlib module stepped as the replay steps it, on an episode of its own: copies of the path's
    pipelines, the module's state carried in the episode from step to step (rewards are not known: 0)."""

    def __init__(self, module: Any, e2m: Any, m2e: Any, spaces: tuple[Any, Any], explore: bool):
        self.module, self.pipelines, self.spaces, self.explore = module, (e2m, m2e), spaces, explore
        self.reset()

    def reset(self) -> None:
        self.e2m, self.m2e = (copy.deepcopy(p) for p in self.pipelines)
        self.episode: Any = None
        self.shared: dict[str, Any] = {}
        self.last: tuple[Any, dict[str, Any]] | None = None

    def act(self, obs: Any) -> np.ndarray:
        from ray.rllib.core.columns import Columns
        from ray.rllib.env.single_agent_episode import SingleAgentEpisode

        if self.episode is None or self.last is None:
            self.episode = SingleAgentEpisode(observation_space=self.spaces[0], action_space=self.spaces[1])
            self.episode.add_env_reset(observation=obs)
        else:
            self.episode.add_env_step(observation=obs, action=self.last[0], reward=0.0,
                                      extra_model_outputs=self.last[1])
        kw = dict(rl_module=self.module, episodes=[self.episode], explore=self.explore, shared_data=self.shared)
        batch = self.e2m(batch={}, **kw) if self.e2m is not None else {}
        out = self.module._forward_exploration(batch) if self.explore else self.module._forward_inference(batch)
        out = self.m2e(batch=out, **kw)
        skip = (Columns.ACTIONS, Columns.ACTIONS_FOR_ENV)
        self.last = out[Columns.ACTIONS][0], {k: v[0] for k, v in out.items() if k not in skip}
        return np.asarray(out.get(Columns.ACTIONS_FOR_ENV, out[Columns.ACTIONS])[0])


def _rsl(side: Side, pr: Probe) -> None:
    """rsl_rl's runner and TorchScript export: normalizer, MLP and the deterministic (or sampled) output."""
    import torch

    path = pr.path
    model = getattr(path, "policy", None)
    module = getattr(path, "module", None)
    space = getattr(getattr(path.env, "envs", [None])[0], "action_space", None)
    side.action_space = space

    clip = getattr(path.env, "clip_actions", None)  # what the env applies to every action (agent cfg)

    def as_row(fn: Callable[[Any], Any]) -> Callable[[np.ndarray], np.ndarray]:
        def run(x: np.ndarray) -> np.ndarray:
            with torch.no_grad():
                out = fn(torch.as_tensor(np.asarray(x, dtype=np.float32))[None])
            row = out[0].detach().cpu().numpy()
            return row if clip is None else np.clip(row, -clip, clip)
        return run

    if getattr(path, "recurrent", False):
        _rsl_recurrent(side, path, clip)
        return
    if model is not None and hasattr(model, "mlp"):
        dist, sample = model.distribution, bool(path.explore)

        def out_of(mlp_out):
            if dist is None:
                return mlp_out
            if sample:
                dist.update(mlp_out)
                return dist.sample()
            return dist.deterministic_output(mlp_out)

        side.head = as_row(lambda z: out_of(model.mlp(z)))
        policy = as_row(lambda x: out_of(model.mlp(model.obs_normalizer(x))))
        side.stats = _stats(model.obs_normalizer)
    elif module is not None and hasattr(module, "mlp"):
        side.head = as_row(lambda z: module.deterministic_output(module.mlp(z)))
        policy = as_row(module)
        side.stats = _stats(module.obs_normalizer)
    else:  # an export written by hand (a plain Sequential, a wrapper, an ONNX graph of any names): run it whole
        call = _export_call(path)
        if call is None:
            return
        policy = as_row(call)
    side.stateless = True
    side.stepper = lambda: _Stateless(policy)


def _export_call(path: Any) -> Callable[[Any], Any] | None:
    """The path's exported policy as a function of one flat observation batch (TorchScript module or ONNX
    session, whatever its inner parts or input names), or None (image inputs: not one flat tensor)."""
    import torch

    if getattr(path, "image_groups", None):
        return None
    module = getattr(path, "module", None)
    if isinstance(module, torch.nn.Module) or callable(module) and hasattr(module, "graph"):
        return module
    session, name = getattr(path, "session", None), getattr(path, "input_name", None)
    if session is not None and name is not None:
        def run(x: Any) -> Any:
            return torch.as_tensor(session.run(None, {name: x.detach().cpu().numpy().astype(np.float32)})[0])
        return run
    return None


class _Recurrent:
    """A recurrent rsl_rl policy for one robot, as its TorchScript export runs it: state buffers of batch 1,
    `reset()` at an episode's start, one call per step (clipped as the path's env clips)."""

    def __init__(self, module: Any, clip: float | None):
        self.module, self.clip = module, clip

    def reset(self) -> None:
        self.module.reset()

    def act(self, x: Any) -> np.ndarray:
        import torch

        with torch.no_grad():
            out = self.module(torch.as_tensor(np.asarray(x, dtype=np.float32))[None])[0].detach().cpu().numpy()
        return out if self.clip is None else np.clip(out, -self.clip, self.clip)


def _rsl_recurrent(side: Side, path: Any, clip: float | None) -> None:
    """The runner's RNNModel (its as_jit() copy) or the TorchScript export (a copy with batch-1 state), reset
    at the replayed episode's start as the path resets it; explore on has no stepper (sampling is not replayed)."""
    import torch

    model, module = getattr(path, "policy", None), getattr(path, "module", None)
    if model is not None and hasattr(model, "as_jit") and not path.explore:
        side.stepper = lambda: _Recurrent(model.as_jit(), clip)
    elif module is not None and hasattr(module, "reset") and getattr(path, "memory", None) is not None:
        names = list(path.memory.names)

        def one_robot() -> _Recurrent:
            copy_ = copy.deepcopy(module)
            for name in names:
                buf = getattr(copy_, name)
                setattr(copy_, name, torch.zeros(buf.shape[0], 1, buf.shape[2], dtype=buf.dtype, device=buf.device))
            return _Recurrent(copy_, clip)

        side.stepper = one_robot


def _stats(normalizer: Any) -> tuple[np.ndarray, np.ndarray] | None:
    try:
        mean, std = normalizer._mean, normalizer._std
    except AttributeError:  # no normalizer (Identity)
        return None
    return mean.detach().cpu().numpy().reshape(-1), std.detach().cpu().numpy().reshape(-1)


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
