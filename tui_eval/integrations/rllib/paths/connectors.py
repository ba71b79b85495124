"""Path `connectors`: the RLModule and both connector pipelines restored from the checkpoint, stepping
a vector env the way RLlib's SingleAgentEnvRunner does (no ray.init, no Algorithm)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_eval.envs.guard import GuardedEnv
from tui_eval.feed import FeedRelay, SeedFeed
from tui_eval.integrations.rllib.parts import RLLIB_PARTS
from tui_eval.integrations.rllib.paths import filters as rllib_filters
from tui_eval.integrations.rllib.paths.batched_e2m import BatchedEnvToModule, stock_tail_start
from tui_eval.integrations.rllib.paths.env import EnvRecipe
from tui_eval.integrations.rllib.paths.fused import FusedPipelines, why_not_fusable
from tui_eval.integrations.rllib.paths.fused_m2e import FusedModuleToEnv, why_not_fusable_module_to_env
from tui_eval.integrations.rllib.paths.layout import connector_dir, module_dir
from tui_eval.integrations.rllib.paths.rerun import RllibRerun
from tui_eval.integrations.rllib.paths.runner_loop import RunnerLoop
from tui_eval.paths.base import Emit, InferencePath, LiveParts
from tui_eval.paths.vector_loop import play_vector, record_of
from tui_eval.records import EpisodeRecord


class RllibConnectorsPath(RllibRerun, InferencePath):
    name = "connectors"

    def __init__(self, *, checkpoint: Path, module_id: str, recipe: EnvRecipe, num_envs: int, device: str,
                 explore: bool, success_key: str | None, step_timeout: float | None, generic_connectors: bool = False,
                 rllib_pieces: bool = False, freeze_filters: bool = False):
        """`generic_connectors`: both pipelines step by step on the episodes, as for a checkpoint with pieces of
        its own (RLlib's stock pieces among them batched where provably the same); `rllib_pieces`: step by
        step with every piece RLlib's own, none batched (the reference, for benchmarks and tests)."""
        import torch
        from ray.rllib.connectors.env_to_module import EnvToModulePipeline
        from ray.rllib.connectors.module_to_env import ModuleToEnvPipeline
        from ray.rllib.core.rl_module.rl_module import RLModule

        self.explore = explore
        self.recipe = recipe
        self.device = torch.device(device)
        module: Any = RLModule.from_checkpoint(str(module_dir(checkpoint, module_id)))  # a TorchRLModule
        module.to(self.device)
        module.eval()
        self.module = module
        self.env_to_module = EnvToModulePipeline.from_checkpoint(str(connector_dir(checkpoint, "env_to_module")))
        self.module_to_env = ModuleToEnvPipeline.from_checkpoint(str(connector_dir(checkpoint, "module_to_env")))
        _place_tensors_on(self.env_to_module, self.device)
        frozen = rllib_filters.freeze_filters(self.env_to_module) if freeze_filters else 0
        self.relay = FeedRelay()
        relay = self.relay
        self.env: Any = recipe.make_vec(  # DictInfoToList: infos are a list, one dict per sub-env
num_envs, wrappers=[lambda env: GuardedEnv(
            env, feed=relay, success_key=success_key, step_timeout=step_timeout)])
        self.num_envs = num_envs
        action_space = self.env.single_action_space
        reason = "--generic-connectors" if generic_connectors else "RLlib's pieces only" if rllib_pieces \
            else why_not_fusable(self.env_to_module, self.module_to_env, self.module,
                                 self.env.single_observation_space, action_space)
        self.fused: FusedPipelines | None = (
            None if reason else FusedPipelines(self.module, self.module_to_env, self.device))
        self.env_to_module_call: Any = self.env_to_module
        self.module_to_env_call: Any = self.module_to_env
        mode = "stock pipelines fused into batched calls"
        if not self.fused:
            mode = f"pipelines run step by step ({reason})"
            batched = [] if rllib_pieces else self._batch_stock_pieces(action_space)
            if batched:
                mode += f", {' and '.join(batched)} batched"
        self.description = (f"RLModule + EnvToModule/ModuleToEnv from the checkpoint ({mode}), {num_envs} envs, "
                            f"one batched forward per step, {self.device}, env {recipe.name}"
                            + (f", {frozen} filter(s) frozen at the checkpoint's statistics" if frozen else ""))
        self._t = 0

    def _batch_stock_pieces(self, action_space) -> list[str]:
        """Puts the batched equivalents of RLlib's stock pieces in place of the pipelines where they stand
        for them; says which."""
        batched = []
        start = stock_tail_start(self.env_to_module)
        if start is not None:
            self.env_to_module_call = BatchedEnvToModule(self.env_to_module, start)
            batched.append("the stock env-to-module tail")
        if why_not_fusable_module_to_env(self.module_to_env, action_space) is None:
            self.module_to_env_call = FusedModuleToEnv(self.module_to_env)
            batched.append("the stock module-to-env pipeline")
        return batched

    def live_parts(self) -> LiveParts:
        return LiveParts("connectors", self.module, self.env_to_module, self.module_to_env, self.recipe.make_one,
                         self.recipe, library=RLLIB_PARTS)

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        self.relay.feed = feed
        try:
            (self._run_fused if self.fused is not None else self._run_generic)(feed, emit)
        finally:
            self.relay.feed = None

    def _run_fused(self, feed: SeedFeed, emit: Emit) -> None:
        """The env loop of SingleAgentEnvRunner with the stock pipelines' effect applied per batch."""
        fused = self.fused
        assert fused is not None
        fused.reset_state()

        def act(obs: Any) -> Any:
            return fused(obs, self.explore, self._t)[1]

        steps = play_vector(self.env, act, feed, emit, self._record_from,
                            on_reset=lambda rows: fused.reset_state(list(rows)))
        self._t += steps * self.num_envs

    def _run_generic(self, feed: SeedFeed, emit: Emit) -> None:
        """SingleAgentEnvRunner's env loop, with both connector pipelines called on every step."""
        loop = RunnerLoop(env=self.env, module=self.module, env_to_module=self.env_to_module_call,
                          module_to_env=self.module_to_env_call, record=self._record_from_episode)
        loop.t = self._t
        try:
            loop.run(feed, emit, self.explore)
        finally:
            self._t = loop.t

    def _record_from_episode(self, episode: Any, last_info: dict[str, Any], wall_s: float) -> EpisodeRecord:
        return self._record_from(float(episode.get_return()), len(episode), last_info, wall_s)

    def _record_from(self, ret: float, length: int, last_info: dict[str, Any], wall_s: float) -> EpisodeRecord:
        return record_of(self.name, self.explore, ret, length, last_info, wall_s)

    def close(self) -> None:
        self.env.close()


def _place_tensors_on(pipeline, device) -> None:
    """NumpyToTensor remembers the device of training time; point it at ours (--device)."""
    for connector in getattr(pipeline, "connectors", []):
        if type(connector).__name__ == "NumpyToTensor":
            connector._device = device
