"""Path `runner`: the policy as rsl_rl's own play scripts get it.

`OnPolicyRunner(env, cfg, log_dir=None, device=...)`, `runner.load(checkpoint)`,
`runner.get_inference_policy()`: the actor in eval mode, whose output is the deterministic mean (the
observation normalizer inside it). With explore on, actions are sampled from the actor's
distribution (`actor(obs, stochastic_output=True)`, what PPO's `act` does in training).

`RslLoopPath` is the episode loop the rsl_rl paths share (runner, jit, onnx differ only in `_act` and
`_reset_memory`): one batched policy forward per step for all worlds, returns and lengths summed with
vector ops, and a record per episode the env reports finished (see `vecenv.EvalVecEnv`). A
recurrent policy's state is reset for every world at `begin` and, after each step, for the worlds the
env reports done (their observation is already the first of their next episode), as rsl_rl's play
loop does with `policy.reset(dones)`; never at any other time.
"""

from __future__ import annotations

import copy
from abc import abstractmethod
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict

from tui_eval.errors import BadInput, first_line
from tui_eval.feed import SeedFeed
from tui_eval.integrations.rsl_rl.paths.eval_env import IDLE, LIVE, EvalVecEnv
from tui_eval.integrations.rsl_rl.paths.load_error import summarise_load_error
from tui_eval.integrations.rsl_rl.paths.model import finalise_obs_groups, quiet
from tui_eval.integrations.rsl_rl.paths.rerun import RslRerun
from tui_eval.paths.base import Emit, InferencePath
from tui_eval.records import EpisodeRecord

#: what the runner loads for inference: the models and the iteration, not the optimizer (the pre-4.0
#: mapping reorders parameters, and an optimizer state is of no use to a policy that does not learn)
LOAD_CFG = {"actor": True, "critic": True, "optimizer": False, "iteration": True, "rnd": False}


def build_runner(env: EvalVecEnv, cfg: dict[str, Any], checkpoint: Path, device: str,
                 cfg_label: str = "the agent cfg", runner_class: type | None = None):
    """OnPolicyRunner (or `runner_class`, a framework's subclass of it) on `env` with `checkpoint` loaded strictly;
    BadInput when the cfg does not fit."""
    from rsl_rl.runners import OnPolicyRunner

    cfg = finalise_obs_groups(copy.deepcopy(cfg), list(env.get_observations().keys()))
    try:
        with quiet():
            runner = (runner_class or OnPolicyRunner)(env, cfg, log_dir=None, device=device)
    except BadInput:
        raise
    except Exception as exc:  # OnPolicyRunner raises whatever the cfg's classes raise
        raise BadInput(f"rsl_rl cannot build the runner from {cfg_label}: {first_line(exc)}") from None
    try:
        runner.load(str(checkpoint), load_cfg=LOAD_CFG, strict=True, map_location=device)
    except RuntimeError as exc:
        raise BadInput(summarise_load_error(exc, cfg_label, _failed_role(runner, checkpoint))) from None
    return runner, cfg


def _failed_role(runner, checkpoint: Path) -> str:
    """runner.load loads the actor, then the critic: which one did not fit?"""
    try:
        data = torch.load(str(checkpoint), map_location="cpu", weights_only=True)
        runner.alg.get_policy().load_state_dict(data["actor_state_dict"], strict=True)
    except Exception:  # any failure to load the actor means: the actor did not fit
        return "actor"
    return "critic"


class RslLoopPath(RslRerun, InferencePath):
    """Steps an EvalVecEnv with one batched policy call per step and emits a record per finished episode."""

    env: EvalVecEnv

    #: whether the policy carries state from step to step (set by the subclass)
    recurrent: bool = False

    @abstractmethod
    def _act(self, obs: TensorDict) -> torch.Tensor:
        """Actions (num_envs, num_actions) for the batch of observations."""

    @property
    def frames_problem(self) -> str | None:  # type: ignore[override]
        if self.env.batched:
            return ("a batched simulator's worlds (--vecenv, mjlab) are not rendered here: frames come from "
                    "Gymnasium envs")
        return None

    def _reset_memory(self, starting: torch.Tensor | None) -> None:
        """A recurrent policy forgets the worlds where `starting` is true (None: all): their episode starts."""

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        env = self.env
        n = env.num_envs
        ret = np.zeros(n)
        length = np.zeros(n, dtype=np.int64)
        # a --vecenv env may live on another device than the policy (--device): move as rsl_rl's runner does
        policy_device = torch.device(getattr(self, "device", None) or env.device)
        move = policy_device != torch.device(env.device)
        # In inference mode throughout, as rsl_rl's runner collects its rollouts (policy and env steps): a tensor
        # the env makes there may be written in place only there, so the batch's reseeding runs there too
        with torch.inference_mode():
            obs = env.begin(feed)
            try:
                self._play(feed, emit, obs, policy_device, move, ret, length)
            finally:
                env.end()

    def _play(self, feed: SeedFeed, emit: Emit, obs: TensorDict, policy_device: torch.device, move: bool,
              ret: np.ndarray, length: np.ndarray) -> None:
        env, recurrent = self.env, self.recurrent
        if recurrent:
            self._reset_memory(None)
        while env.busy and not feed.cancelled:
            live = env.state == LIVE  # before the step
            actions = self._act(obs.to(policy_device) if move else obs)
            obs, rewards, dones, _extras = env.step(actions.to(env.device) if move else actions)
            if recurrent:
                self._reset_memory(dones.reshape(-1).to(policy_device, torch.bool))
            np.add(ret, rewards.detach().reshape(-1).cpu().numpy(), out=ret, where=live)
            length += live
            for end in env.finished:
                w = end.world
                emit(EpisodeRecord(path=self.name, seed=end.seed, block=end.block, ret=float(ret[w]),
                                   length=int(length[w]), success=end.success, invalid=end.reason is not None,
                                   reason=end.reason, wall_s=end.wall_s, explore=self.explore,
                                   world=w if env.batched else None, start=end.start,
                                   termination=end.termination, reward_terms=end.reward_terms))
                ret[w] = 0.0
                length[w] = 0

    def _acting_rows(self) -> np.ndarray:
        """Worlds whose actions matter this step (not idle)."""
        return np.flatnonzero(self.env.state != IDLE)

    def close(self) -> None:
        self.env.close()


class RslRunnerPath(RslLoopPath):
    name = "runner"

    def __init__(self, *, env: EvalVecEnv, cfg: dict[str, Any], checkpoint: Path, device: str, explore: bool,
                 checkpoint_note: str = "", cfg_label: str = "the agent cfg", runner_class: type | None = None):
        self.env = env
        try:
            self.runner, self.cfg = build_runner(env, cfg, checkpoint, device, cfg_label, runner_class)
        except BaseException:
            env.close()
            raise
        self.policy = self.runner.get_inference_policy(device)
        self.recurrent = bool(getattr(self.policy, "is_recurrent", False))
        self.stochastic = getattr(self.policy, "distribution", None) is not None
        if explore and not self.stochastic:
            env.close()
            raise BadInput("the actor has no output distribution, so explore=on cannot sample; use --explore "
                           "runner=off")
        self.explore = explore
        self.device = device
        self.description = (f"{type(self.runner).__name__}.load({checkpoint_note or checkpoint.name}) + "
                            f"get_inference_policy(), {env.description}, one batched forward per step, {device}"
                            + (", policy.reset(dones) at each episode start" if self.recurrent else ""))

    def set_explore(self, explore: bool) -> None:
        self.explore = explore and self.stochastic

    def _reset_memory(self, starting: torch.Tensor | None) -> None:
        self.policy.reset(starting)  # rsl_rl: None clears every world's state, a mask the worlds set in it

    def _act(self, obs: TensorDict) -> torch.Tensor:
        if self.explore:
            return self.policy(obs, stochastic_output=True)
        return self.policy(obs)

