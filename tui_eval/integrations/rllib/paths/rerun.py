"""RLlib's built-in paths as the doctor replays and reruns them (tui_eval/paths/rerun.py): from the module and
connector pipelines the path really holds (`live_parts()`), on copies, so that the path is left as it was."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tui_eval.envs import global_rng
from tui_eval.integrations.rllib.parts import module_logits
from tui_eval.paths.base import LiveParts
from tui_eval.paths.rerun import STAGES, Side, Stateless, Trace, first_row, flat

MAX_STEPS = 10_000


class RllibRerun:
    """`replay` and `rerun` for a path whose `live_parts()` hold its RLModule, pipelines and env maker."""

    name: str

    def live_parts(self) -> LiveParts | None: ...

    def replay(self, seed: int) -> Trace | None:
        parts = self.live_parts()
        if parts is None or parts.module is None or parts.make_env is None:
            return None
        return replay_parts(self.name, parts, seed)

    def keeps_state(self) -> bool:
        parts = self.live_parts()
        module = None if parts is None else parts.module
        return bool(module is not None and hasattr(module, "is_stateful") and module.is_stateful())

    def rerun(self, trace: Trace) -> Side | None:
        parts = self.live_parts()
        if parts is None or parts.module is None or parts.module_to_env is None or parts.make_env is None:
            return None
        return rllib_side(self.name, parts, trace)


def replay_parts(name: str, p: LiveParts, seed: int) -> Trace:
    """One episode on `seed` from the path's own live module and pipelines (copies of the pipelines, so the
    path's connector state is left as it was), every stage recorded."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode
    from ray.rllib.utils.numpy import convert_to_numpy

    module, e2m, m2e = p.module, copy.deepcopy(p.env_to_module), copy.deepcopy(p.module_to_env)
    assert p.make_env is not None
    env = p.make_env()
    trace = Trace(name, {s: [] for s in STAGES})
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
            trace.keep_input(obs)
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


def rllib_side(name: str, pr: LiveParts, trace: Trace) -> Side:
    """RLlib's built-in paths: the module and module_to_env on a one-step episode."""
    side = Side(name, trace, explore=pr.explore)
    module, e2m, m2e, explore = pr.module, pr.env_to_module, pr.module_to_env, bool(pr.explore)
    assert pr.make_env is not None
    env = pr.make_env()
    spaces = env.observation_space, env.action_space
    env.close()
    side.action_space = spaces[1]
    dict_obs = type(spaces[0]).__name__ == "Dict"
    if dict_obs:  # its stages hold Dict observations flattened: not what its module takes
        side.notes.append(f"{name}: Dict observations: the probes that rerun its module on its env_to_module "
                          "output are skipped; those that rerun the whole policy on its observations run")
    else:
        side.logits = module_logits(module, explore)

    head = _PolicyHead(module, pipelines_as_they_stand(e2m, m2e), spaces, explore)

    if not dict_obs:
        side.head = head.one
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
        return side
    obs, normalized = side.steps("obs"), side.steps("env_to_module")
    if obs and all(np.asarray(o).shape == np.asarray(z).shape and np.allclose(o, z) for o, z in zip(obs, normalized)):
        side.stateless = True  # its env_to_module passes observations through: the head is the whole policy
        # a sampling policy draws in another order when batched: fed one input at a time
        side.stepper = lambda: Stateless(head.one, None if explore else head.many)
    return side


class _PolicyHead:
    """The module between both pipelines, on one-step episodes (the whole policy of a path whose env_to_module
    passes observations through): `one` observation, or `many` in one call of each pipeline. The forward stays one
    row at a time: a product over many rows rounds otherwise than over one, and the same policy fed alike must give
    the very same actions."""

    def __init__(self, module: Any, fresh: Callable[[], tuple[Any, Any]], spaces: tuple[Any, Any], explore: bool):
        self.module, self.fresh, self.spaces, self.explore = module, fresh, spaces, explore

    def one(self, z: np.ndarray) -> np.ndarray:
        return self.many([z])[0]

    def many(self, zs: Sequence[np.ndarray]) -> list[np.ndarray]:
        import torch
        from ray.rllib.core.columns import Columns
        from ray.rllib.env.single_agent_episode import SingleAgentEpisode

        rows = [np.asarray(z, dtype=np.float32) for z in zs]
        episodes = [SingleAgentEpisode(observation_space=self.spaces[0], action_space=self.spaces[1]) for _ in rows]
        for episode, z in zip(episodes, rows):
            episode.add_env_reset(observation=z)
        calls = dict(rl_module=self.module, episodes=episodes, explore=self.explore,
                     shared_data={})  # env_to_module leaves there what module_to_env needs to unbatch
        env_to_module, module_to_env = self.fresh()
        if env_to_module is not None:
            env_to_module(batch={}, **calls)
        forward = self.module._forward_exploration if self.explore else self.module._forward_inference
        with torch.no_grad():
            outs = [forward({Columns.OBS: torch.as_tensor(z)[None]}) for z in rows]
        if len(outs) > 1 and not all(torch.is_tensor(value) for value in outs[0].values()):
            return [self.one(z) for z in rows]  # an output that does not stack: one call each
        out = outs[0] if len(outs) == 1 else {key: torch.cat([o[key] for o in outs]) for key in outs[0]}
        out = module_to_env(batch=out, **calls)
        return [np.asarray(action) for action in out.get(Columns.ACTIONS_FOR_ENV, out[Columns.ACTIONS])]


def pipelines_as_they_stand(e2m: Any, m2e: Any) -> Callable[[], tuple[Any, Any]]:
    """() -> the pipelines as they stand, for one call each that leaves the path's own as they were: copies, or
    the path's own where every piece is one of RLlib's stock pieces, which keep nothing from a call to the next
    (a copy of both took ~1 ms, most of a fed step)."""
    from tui_eval.integrations.rllib.paths.fused import STOCK_ENV_TO_MODULE, STOCK_MODULE_TO_ENV

    stock = STOCK_ENV_TO_MODULE | STOCK_MODULE_TO_ENV
    if all(type(piece).__name__ in stock and type(piece).__module__.startswith("ray.rllib.connectors.")
           for pipeline in (e2m, m2e) if pipeline is not None for piece in pipeline.connectors):
        return lambda: (e2m, m2e)
    return lambda: (copy.deepcopy(e2m), copy.deepcopy(m2e))


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
