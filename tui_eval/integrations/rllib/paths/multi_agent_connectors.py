"""Path `connectors` of a multi-agent checkpoint: the MultiRLModule and both multi-agent connector pipelines
restored from the checkpoint, stepping the user's MultiAgentEnv as RLlib's MultiAgentEnvRunner does (no
ray.init, no Algorithm). One seed is one multi-agent episode. Where a pipeline ends with exactly RLlib's stock
multi-agent pieces, their batched equivalents (batched_multi_agent.py) stand for them; the description says so."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui_eval.feed import FeedRelay, SeedFeed
from tui_eval.integrations.rllib.parts import RLLIB_PARTS
from tui_eval.integrations.rllib.paths import batched_multi_agent as batched
from tui_eval.integrations.rllib.paths.env import EnvRecipe
from tui_eval.integrations.rllib.paths.filters import freeze_filters as freeze_filters_of
from tui_eval.integrations.rllib.paths.layout import MODULES_DIR, connector_dir
from tui_eval.integrations.rllib.paths.multi_agent_env import MultiAgentGuardedEnv
from tui_eval.integrations.rllib.paths.multi_agent_loop import MultiAgentRunnerLoop, make_multi_agent_vec
from tui_eval.integrations.rllib.paths.multi_agent_record import multi_agent_record
from tui_eval.paths.base import Emit, InferencePath, LiveParts
from tui_eval.paths.rerun import MultiTrace
from tui_eval.records import EpisodeRecord


class RllibMultiAgentConnectorsPath(InferencePath):
    name = "connectors"

    def __init__(self, *, checkpoint: Path, module_ids: list[str], view: str | None, mapping_fn, recipe: EnvRecipe,
                 num_envs: int, device: str, explore: bool, success_key: str | None, step_timeout: float | None,
                 freeze_filters: bool = False, rllib_pieces: bool = False):
        """`rllib_pieces`: every connector piece RLlib's own, none batched (the reference, for benchmarks
        and tests)."""
        import torch
        from ray.rllib.connectors.env_to_module import EnvToModulePipeline
        from ray.rllib.connectors.module_to_env import ModuleToEnvPipeline
        from ray.rllib.core.rl_module.rl_module import RLModule

        self.explore, self.module_ids, self.view = explore, list(module_ids), view
        self.device = torch.device(device)
        module: Any = RLModule.from_checkpoint(str(checkpoint / MODULES_DIR))  # a MultiRLModule
        module.foreach_module(lambda mid, sub: sub.to(self.device) if isinstance(sub, torch.nn.Module) else sub)
        module.foreach_module(lambda mid, sub: sub.eval() if isinstance(sub, torch.nn.Module) else sub)
        self.module = module
        self.env_to_module = EnvToModulePipeline.from_checkpoint(str(connector_dir(checkpoint, "env_to_module")))
        self.module_to_env = ModuleToEnvPipeline.from_checkpoint(str(connector_dir(checkpoint, "module_to_env")))
        for connector in getattr(self.env_to_module, "connectors", []):
            if type(connector).__name__ == "NumpyToTensor":  # it remembers the device of training time
                connector._device = self.device
        # a multi-agent MeanStdFilter keeps one filter per agent id; frozen, each normalises with its saved statistics
        frozen = freeze_filters_of(self.env_to_module) if freeze_filters else 0
        self.relay = FeedRelay()
        relay = self.relay

        def make_guarded():
            return MultiAgentGuardedEnv(recipe.make_one(recipe.context(), env_checker=False), feed=relay,
                                        success_key=success_key, step_timeout=step_timeout)

        self.env: Any = make_multi_agent_vec(make_guarded, num_envs)
        self.env_to_module_call: Any = self.env_to_module
        self.module_to_env_call: Any = self.module_to_env
        batched_pieces = [] if rllib_pieces else self._batch_stock_pieces()
        self.loop = MultiAgentRunnerLoop(env=self.env, module=module, env_to_module=self.env_to_module_call,
                                         module_to_env=self.module_to_env_call, mapping_fn=mapping_fn,
                                         record=self._record)
        self.num_envs = num_envs  # what a Ray actor running this path holds at once (isolation/worker.py)
        self.description = (f"MultiRLModule ({', '.join(self.module_ids)}) + multi-agent EnvToModule/ModuleToEnv "
                            f"from the checkpoint, stepped as MultiAgentEnvRunner does"
                            + (f" ({' and '.join(batched_pieces)} batched per module)" if batched_pieces else "")
                            + f", {num_envs} envs, "
                            f"{self.device}, env {recipe.name}"
                            + (f", {frozen} filter(s) frozen at the checkpoint's statistics" if frozen else ""))

    def _batch_stock_pieces(self) -> list[str]:
        """Puts the batched equivalents of RLlib's stock multi-agent pieces in place of the pipelines where they
        stand for them; says which."""
        found = []
        start = batched.multi_agent_tail_start(self.env_to_module)
        if start is not None:
            self.env_to_module_call = batched.BatchedMultiAgentEnvToModule(self.env_to_module, start)
            found.append("the stock env-to-module tail")
        if batched.why_not_fusable_multi_agent_module_to_env(self.module_to_env) is None:
            self.module_to_env_call = batched.FusedMultiAgentModuleToEnv(self.module_to_env)
            found.append("the stock module-to-env pipeline")
        return found

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        self.relay.feed = feed
        try:
            self.loop.run(feed, emit, self.explore)
        finally:
            self.relay.feed = None

    def _record(self, episode: Any, facts: dict[str, Any], wall_s: float) -> EpisodeRecord:
        return multi_agent_record(path=self.name, facts=facts, chunks=[episode], module_ids=self.module_ids,
                                  view=self.view, wall_s=wall_s, explore=self.explore)

    def live_parts(self) -> LiveParts:
        return LiveParts("connectors", self.module, self.env_to_module, self.module_to_env, explore=self.explore,
                         library=RLLIB_PARTS)

    def replay(self, seed: int) -> MultiTrace:  # type: ignore[override]  # a multi-agent path's replay
        from tui_eval.integrations.rllib.paths.multi_agent_rerun import replay_connectors

        return replay_connectors(self, seed)

    def own_mapping(self, agents: Sequence[Any]) -> dict[Any, str]:
        """Each agent's module as the checkpoint's policy_mapping_fn gives it."""
        from tui_eval.integrations.rllib.paths.multi_agent_rerun import checkpoint_mapping

        return checkpoint_mapping(self.loop.mapping_fn, agents)

    def mapping_for(self, loop: MultiTrace, seed: int, module_ids: Sequence[str]) -> dict[Any, str] | None:
        """Another mapping of `loop`'s agents to modules under which this path sends `loop`'s actions on `seed`."""
        from tui_eval.integrations.rllib.paths.multi_agent_rerun import find_mapping

        return find_mapping(self, loop, seed, module_ids)

    def close(self) -> None:
        self.env.close()
