"""Runs the multi-agent `connectors` path's loop with the batched multi-agent pieces and RLlib's real ones side by
side on every step (env-to-module tail and module-to-env pipeline), and says where their outputs differ: values,
dtypes, devices, every dict's key order (modules, columns, agents per sub-env) and `shared_data`
(for tests/integration/rllib/test_multi_agent_batched.py). RLlib's outputs go on, so the episodes are RLlib's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.e2m_checks import BothTails, tensor_differences
from tests.support.m2e_checks import BothModuleToEnv, SeedList, differences


def order_differences(mine: Any, theirs: Any, where: str = "") -> list[str]:
    """Where the key order of a dict (at any depth, through lists and tuples) differs."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        if list(mine) != list(theirs):
            return [f"{where or 'top'}: key order {list(mine)} != {list(theirs)}"]
        return [d for key in mine for d in order_differences(mine[key], theirs[key], f"{where}/{key}")]
    if isinstance(mine, (list, tuple)) and isinstance(theirs, (list, tuple)) and len(mine) == len(theirs):
        return [d for i, (a, b) in enumerate(zip(mine, theirs)) for d in order_differences(a, b, f"{where}[{i}]")]
    return []


class BothMultiAgentTails(BothTails):
    """BothTails, with every nested key order and `shared_data`'s order compared too."""

    def __call__(self, *, rl_module, batch=None, episodes, explore, shared_data=None, **kwargs):
        shared_data = shared_data if shared_data is not None else {}
        before = list(self.found), self.compared
        mine: dict[str, Any] = {}
        spy = self.batched.batched_tail

        def batched_tail(*args):
            mine["out"] = spy(*args)
            mine["shared"] = dict(args[-1])
            return mine["out"]

        self.batched.batched_tail = batched_tail
        try:
            theirs = super().__call__(rl_module=rl_module, batch=batch, episodes=episodes, explore=explore,
                                      shared_data=shared_data, **kwargs)
        finally:
            del self.batched.batched_tail
        if self.compared > before[1] and mine.get("out") is not None:
            self.found += order_differences(mine["out"], theirs)
            self.found += order_differences(mine["shared"], shared_data, "shared_data")
        return theirs


class BothMultiAgentModuleToEnv(BothModuleToEnv):
    """BothModuleToEnv, with every nested key order compared too (per sub-env: the agents' order)."""

    def compare(self, mine, theirs) -> list:
        return differences(mine, theirs) + order_differences(mine, theirs)


def rllib_pieces_path(kind, num_envs: int):
    """The multi-agent `connectors` path with every piece RLlib's own (none batched)."""
    from tui_eval.integrations.rllib.paths.multi_agent_connectors import RllibMultiAgentConnectorsPath

    return RllibMultiAgentConnectorsPath(
        checkpoint=kind.checkpoint, module_ids=kind.module_ids, view=None, mapping_fn=kind.config.policy_mapping_fn,
        recipe=kind.env, num_envs=num_envs, device="cpu", explore=False, success_key=None, step_timeout=None,
        rllib_pieces=True)


@dataclass
class SideBySide:
    e2m: BothMultiAgentTails
    m2e: BothMultiAgentModuleToEnv
    records: list
    description: str


def run_side_by_side(checkpoint: Path, explore: bool, seeds=range(20, 23), num_envs: int = 3,
                     plant_e2m=None, plant_m2e=None, **spec: Any) -> SideBySide:
    """The path on `seeds` with both checks in its loop. `plant_e2m(batched)` / `plant_m2e(fused)`: a changed
    batched piece to check against instead (a planted difference); `spec`: more RunSpec fields (`env_id`)."""
    from tui_eval.config.spec import RunSpec
    from tui_eval.integrations.rllib.kind import RllibKind
    from tui_eval.integrations.rllib.paths.batched_multi_agent import (
        BatchedMultiAgentEnvToModule,
        FusedMultiAgentModuleToEnv,
    )

    kind = RllibKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=num_envs, **spec))
    path: Any = kind.build_path("connectors", explore=explore)
    assert isinstance(path.env_to_module_call, BatchedMultiAgentEnvToModule), path.description
    assert isinstance(path.module_to_env_call, FusedMultiAgentModuleToEnv), path.description
    batched, fused = path.env_to_module_call, path.module_to_env_call
    both = SideBySide(BothMultiAgentTails(plant_e2m(batched) if plant_e2m else batched),
                      BothMultiAgentModuleToEnv(plant_m2e(fused) if plant_m2e else fused, path.module_to_env), [],
                      path.description)
    path.loop.env_to_module, path.loop.module_to_env = both.e2m, both.m2e
    try:
        path.run(SeedList(seeds), both.records.append)
    finally:
        path.close()
    assert sorted(r.seed for r in both.records) == list(seeds)
    return both


__all__ = ["BothMultiAgentModuleToEnv", "BothMultiAgentTails", "order_differences", "rllib_pieces_path",
           "run_side_by_side", "tensor_differences"]
