"""Trajectory replay: one seed, every path, every step recorded.

The env and the seed are the same for every path, so the first step where the actions sent to the env
differ is the first divergence. For RLlib's built-in paths each step records every stage, from the
path's own live module and pipelines (copies, so the path's connector state is left as it was):
`obs` (from the env), `env_to_module` (what the module sees), `module_out` (action distribution
inputs), `action` (sampled or greedy, as the module gave it), `action_for_env` (after unsquash/clip).
rsl_rl's paths run themselves on the seed; for the live world they record the actor's input (`obs`), the
observation normalizer's output (`env_to_module`), the MLP's output (`module_out`) where the policy
exposes them (the runner's model and a TorchScript export do, an ONNX session does not), the policy's
action and the action sent to the env (clipped to the agent cfg's `clip_actions` where the env clips).
A custom path's loop is replayed as it is; only the actions it sent to the env are recorded.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tui_eval import global_rng
from tui_eval.doctor.static_diff import Probe

STAGES = ("obs", "env_to_module", "module_out", "action", "action_for_env")
ATOL, RTOL = 1e-5, 1e-5
MAX_STEPS = 10_000


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


def close(a: Any, b: Any, atol: float = ATOL, rtol: float = RTOL) -> bool:
    try:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return a == b
    return x.shape == y.shape and bool(np.allclose(x, y, atol=atol, rtol=rtol))


def replay(p: Probe, seed: int) -> Trace:
    if p.kind == "custom":
        return _replay_custom(p, seed)
    if p.module is not None and p.make_env is not None:
        return _replay_rllib(p, seed)
    if hasattr(getattr(p.path, "env", None), "state"):
        return _replay_vecenv(p, seed)
    return Trace(p.name, note="no replay for this path (only its episodes are compared)")


def _replay_custom(p: Probe, seed: int) -> Trace:
    from tui_eval.envs import INVALID_KEY

    path = p.custom
    if path.form == "act":
        return _replay_act(p, seed)
    rec = path.play(seed, keep_actions=True)
    reason = rec.last_info.get(INVALID_KEY)
    end = f"invalid: {reason}" if reason else ("ended" if rec.done else "returned early")
    return Trace(p.name, {"action_for_env": list(rec.actions)}, rec.ret, rec.length, end,
                 note="custom path: only the actions sent to the env are recorded")


def _replay_act(p: Probe, seed: int) -> Trace:
    """An act-form policy stepped as CustomPath.play steps it, recording what it saw and sent; a deep copy
    of the policy taken first lets the doctor run its steps again (None when it cannot be copied)."""
    from tui_eval.envs import INVALID_KEY

    path = p.custom
    try:
        snapshot = copy.deepcopy(path.target)
    except Exception:  # the user's object may hold what cannot be copied (a session, a lock)
        snapshot = None
    trace = Trace(p.name, {"obs": [], "action_for_env": []}, snapshot=snapshot,
                  note="act-form custom path: the observations it was given and the actions it sent")
    path.seed_feed.seed = (seed, 0)
    env = path.env
    env.keep_actions = False
    env.begin()
    if hasattr(path.target, "reset"):
        path.target.reset()
    obs, _ = env.reset()
    while not env.done:
        action = path.target.act(obs)
        _keep_input(trace, obs)
        trace.stages["obs"].append(flat(obs))
        trace.stages["action_for_env"].append(np.array(action, copy=True))
        obs, *_ = env.step(action)
    reason = env.last_info.get(INVALID_KEY)
    trace.ret, trace.length, trace.end = env.ret, env.length, f"invalid: {reason}" if reason else "ended"
    return trace


class OneSeed:
    """A SeedFeed handing out one seed (nobody watches its steps)."""

    cancelled = False
    heartbeat = None

    def __init__(self, seed: int):
        self.left = [(seed, 0)]

    def take(self):
        return self.left.pop() if self.left else None


def _replay_vecenv(p: Probe, seed: int) -> Trace:
    """A path over an rsl_rl-style EvalVecEnv (`env.state` marks the live world) runs itself on the one
    seed; its policy call and `env.step` are wrapped to record the live world's stages."""
    from tui_eval.integrations.rsl_rl.paths.eval_env import LIVE

    path, env, trace = p.path, p.path.env, Trace(p.name, {s: [] for s in STAGES})
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


def _replay_rllib(p: Probe, seed: int) -> Trace:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode
    from ray.rllib.utils.numpy import convert_to_numpy

    module, e2m, m2e = p.module, copy.deepcopy(p.env_to_module), copy.deepcopy(p.module_to_env)
    assert p.make_env is not None
    env = p.make_env()
    trace = Trace(p.name, {s: [] for s in STAGES})
    explore = bool(p.explore)
    states = global_rng.capture(global_rng.GENERATORS)
    # as the run seeds them before each reset: an env drawing from them, and a sampling path, replay the same draws
    global_rng.seed_all(seed)
    try:
        episode = SingleAgentEpisode(observation_space=env.observation_space, action_space=env.action_space)
        obs, info = env.reset(seed=seed)
        episode.add_env_reset(observation=obs, infos=info)
        shared: dict[str, Any] = {}
        was_training = module.training
        module.eval()
        for t in range(MAX_STEPS):
            batch = e2m(rl_module=module, episodes=[episode], batch={}, explore=explore, shared_data=shared)
            _keep_input(trace, obs)
            trace.stages["obs"].append(flat(obs))
            trace.stages["env_to_module"].append(flat(first_row(convert_to_numpy(batch[Columns.OBS]))))
            with torch.no_grad():
                out = module._forward_exploration(batch, t=t) if explore else module._forward_inference(batch)
            if Columns.ACTION_DIST_INPUTS in out:
                trace.stages["module_out"].append(convert_to_numpy(out[Columns.ACTION_DIST_INPUTS])[0])
            out = m2e(rl_module=module, batch=out, episodes=[episode], explore=explore, shared_data=shared)
            action = out[Columns.ACTIONS][0]
            for_env = out.get(Columns.ACTIONS_FOR_ENV, out[Columns.ACTIONS])[0]
            trace.stages["action"].append(np.array(action, copy=True))
            trace.stages["action_for_env"].append(np.array(for_env, copy=True))
            obs, reward, terminated, truncated, info = env.step(for_env)
            trace.ret += float(reward)
            trace.length += 1
            episode.add_env_step(observation=obs, action=action, reward=reward, infos=info, terminated=terminated,
                                 truncated=truncated, extra_model_outputs={k: v[0] for k, v in out.items()
                                                                          if k not in (Columns.ACTIONS,
                                                                                       Columns.ACTIONS_FOR_ENV)})
            if terminated or truncated:
                trace.end = "terminated" if terminated else "truncated"
                break
        if was_training:
            module.train()
    finally:
        global_rng.restore(states)
        env.close()
    return trace


@dataclass
class Divergence:
    step: int | None  # first step whose env actions differ (or where one episode ends first)
    stage: str | None  # first stage that differs at that step (built-in paths on both sides)
    values: dict[str, Any]  # path -> value at that stage and step
    kind: str  # "action" | "length" | "none"
    stage_match: dict[str, str] | None = None  # {"path": A, "stage": S, "of": B}: A sends B's stage S to the env


def first_divergence(a: Trace, b: Trace) -> Divergence:
    """Where two traces of the same seed first part."""
    if not a.stages or not b.stages:  # a path without a step-by-step replay: only returns are compared
        return Divergence(None, None, {}, "unknown")
    ea, eb = a.env_actions, b.env_actions
    n = min(len(ea), len(eb))
    for t in range(n):
        if not close(ea[t], eb[t]):
            stage = None
            values = {a.path: _plain(ea[t]), b.path: _plain(eb[t])}
            for s in STAGES:
                sa, sb = a.stages.get(s, []), b.stages.get(s, [])
                if t < len(sa) and t < len(sb) and not close(sa[t], sb[t]):
                    stage, values = s, {a.path: _plain(sa[t]), b.path: _plain(sb[t])}
                    break
            match = _stage_match(a, b, t) or _stage_match(b, a, t)
            return Divergence(t, stage or "action_for_env", values, "action", match)
    if len(ea) != len(eb) or a.length != b.length:
        return Divergence(n, "env", {a.path: f"{a.length} steps ({a.end})", b.path: f"{b.length} steps ({b.end})"},
                          "length")
    return Divergence(None, None, {}, "none")


def _stage_match(a: Trace, b: Trace, t: int) -> dict[str, str] | None:
    """When a's env action at step t equals one of b's earlier stages (same observation up to t)."""
    ea = a.env_actions
    for s in ("action", "module_out", "env_to_module"):
        sb = b.stages.get(s, [])
        if t < len(sb) and close(ea[t], sb[t], atol=1e-4, rtol=1e-4):
            return {"path": a.path, "stage": s, "of": b.path}
    return None


def _keep_input(trace: Trace, obs: Any) -> None:
    if isinstance(obs, dict):
        trace.inputs = trace.inputs if trace.inputs is not None else []
        trace.inputs.append(copy.deepcopy(obs))


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


def _plain(v: Any) -> Any:
    arr = np.asarray(v)
    if arr.dtype.kind in "fc":
        return np.round(arr.astype(float), 6).tolist()
    return arr.tolist()
