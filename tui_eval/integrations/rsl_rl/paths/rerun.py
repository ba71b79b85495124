"""rsl_rl's paths as the doctor replays and reruns them (tui_eval/paths/rerun.py): the path itself on one seed,
recording the live world's stages, and its policy's parts (the runner's model, a TorchScript export, an ONNX
session, or an export written by hand, run whole)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from tui_eval.integrations.rsl_rl.paths.eval_env import LIVE
from tui_eval.paths.base import LiveParts
from tui_eval.paths.rerun import STAGES, OneSeed, Side, Stateless, Trace


class RslRerun:
    """`replay` and `rerun` for a path over an rsl_rl-style EvalVecEnv (`env.state` marks the live world)."""

    def replay(self, seed: int) -> Trace | None:
        return replay_vecenv(self, seed)

    def keeps_state(self) -> bool:
        return bool(getattr(self, "recurrent", False))

    def rerun(self, trace: Trace) -> Side | None:
        return rsl_side(self, trace)

    def live_parts(self) -> LiveParts | None:
        """The path's first world, as it is (a Gymnasium env: the doctor reads its facts); None: worlds of a
        simulator that exposes none."""
        envs = getattr(getattr(self, "env", None), "envs", None)
        if not envs:
            return None
        world = envs[0]
        return LiveParts("rsl", make_env=lambda: world, explore=getattr(self, "explore", None))


def replay_vecenv(path: Any, seed: int) -> Trace:
    """A path over an rsl_rl-style EvalVecEnv (`env.state` marks the live world) runs itself on the one
    seed; its policy call and `env.step` are wrapped to record the live world's stages."""
    env, trace = path.env, Trace(path.name, {s: [] for s in STAGES})
    records: list[Any] = []
    step, act = env.step, path._act

    def live_row() -> int | None:
        rows = np.flatnonzero(env.state == LIVE)
        return int(rows[0]) if len(rows) else None

    def recording_act(obs):
        actions = act(obs)
        row = live_row()
        if row is not None:
            for stage, value in _policy_stages(path, obs, row).items():
                trace.stages[stage].append(value)
            trace.stages["action"].append(_row(actions, row))
        return actions

    clip = getattr(env, "clip_actions", None)  # GymVecEnv clips inside step, as Isaac Lab's wrapper does

    def recording_step(actions):
        row = live_row()
        if row is not None:
            sent = _row(actions, row)
            trace.stages["action_for_env"].append(sent if clip is None else np.clip(sent, -clip, clip))
        return step(actions)

    env.step, path._act = recording_step, recording_act
    try:
        path.run(OneSeed(seed), records.append)
    finally:
        del env.step, path._act
    if records:
        trace.ret, trace.length = records[0].ret, records[0].length
        trace.end = f"invalid: {records[0].reason}" if records[0].invalid else "ended"
    shown = [s for s, v in trace.stages.items() if v]
    trace.note = f"the path itself on this seed, recording {', '.join(shown)}"
    return trace


def _row(values: Any, row: int) -> np.ndarray:
    return np.array(values[row].detach().cpu().numpy(), copy=True)


def _policy_stages(path: Any, obs: Any, row: int) -> dict[str, np.ndarray]:
    """The actor's input, normalized input and MLP output for one world, from the policy's own parts
    (rsl_rl's MLPModel and its TorchScript export both hold `obs_normalizer` and `mlp`)."""
    import torch

    model = getattr(path, "policy", None) or getattr(path, "module", None)
    if any(hasattr(model, part) for part in ("cnns", "cnn")):  # image groups: no flat actor input to show
        return {}
    if hasattr(path, "_x"):  # an exported policy takes the actor's groups already concatenated
        x = path._x(obs)
    elif model is not None and hasattr(model, "obs_groups"):
        x = torch.cat([obs[g] for g in model.obs_groups], dim=-1)
    else:
        return {}
    stages = {"obs": _row(x, row)}
    normalizer, mlp = getattr(model, "obs_normalizer", None), getattr(model, "mlp", None)
    # a recurrent or CNN actor's MLP takes the memory's or the encoder's output, not the observation:
    # only an MLP actor's stages can be rebuilt from its parts
    plain_mlp = not any(hasattr(model, part) for part in ("rnn", "memory", "cnns", "cnn"))
    if normalizer is not None and mlp is not None and plain_mlp:
        normalized = normalizer(x)
        stages["env_to_module"] = _row(normalized, row)
        stages["module_out"] = _row(mlp(normalized), row)
    return stages


def rsl_side(path: Any, trace: Trace) -> Side:
    """rsl_rl's runner and TorchScript export: normalizer, MLP and the deterministic (or sampled) output; an
    export written by hand is run whole."""
    import torch

    side = Side(path.name, trace, explore=path.explore)
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
        return side
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
            return side
        policy = as_row(call)
    side.stateless = True
    side.stepper = lambda: Stateless(policy)
    return side


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
