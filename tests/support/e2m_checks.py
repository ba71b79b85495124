"""Runs the `connectors` path's step-by-step loop with the batched env-to-module tail and RLlib's own tail pieces
side by side on every step, and says where their outputs differ
(for tests/integration/rllib/test_rllib_batched_e2m.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.m2e_checks import SeedList, differences


def tensor_differences(mine: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """`differences`, plus the column order and each tensor's torch dtype and device."""
    import torch
    import tree

    found = differences(mine, theirs)
    if list(mine) != list(theirs):
        found.append(f"column order {list(mine)} != {list(theirs)}")
    for column in set(mine) & set(theirs):
        for x, y in zip(tree.flatten(mine[column]), tree.flatten(theirs[column])):
            both_tensors = isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)
            if both_tensors and (x.dtype, x.device) != (y.dtype, y.device):
                found.append(f"{column}: {x.dtype} on {x.device} != {y.dtype} on {y.device}")
    return found


class BothTails:
    """The pieces before the tail once (they may change the episodes, or a filter's statistics), then the
    batched tail and RLlib's tail pieces on the same batch and episodes; RLlib's output goes on."""

    def __init__(self, batched, plant=None) -> None:
        self.batched, self.calls, self.compared, self.found = batched, 0, 0, []
        self.filled = 0  # of the compared calls, those on a batch the pieces before the tail wrote
        self.plant = plant  # plant(mine, shared_data): a difference planted into the batched output

    def __call__(self, *, rl_module, batch=None, episodes, explore, shared_data=None, **kwargs):
        from tui_eval.integrations.rllib.paths.batched_e2m import run_pieces
        from tui_eval.integrations.rllib.paths.filled_e2m import filled_tail

        shared_data = shared_data if shared_data is not None else {}
        batch = run_pieces(self.batched.head, rl_module=rl_module, batch=batch if batch is not None else {},
                           episodes=episodes, explore=explore, shared_data=shared_data, **kwargs)
        self.calls += 1
        theirs_shared = dict(shared_data)
        compare = self.batched.batchable(rl_module, episodes) and (not batch or self.batched.takes_filled(batch))
        mine = None if not compare else filled_tail(self.batched, rl_module, batch, episodes, shared_data) if batch \
            else self.batched.batched_tail(rl_module, episodes, shared_data)
        self.filled += bool(compare and batch)
        theirs = self.batched.real_tail(rl_module=rl_module, batch=batch, episodes=episodes, explore=explore,
                                        shared_data=theirs_shared, **kwargs)
        if mine is not None:
            self.compared += 1
            if self.plant is not None:
                self.plant(mine, shared_data)
            self.found += tensor_differences(mine, theirs)
            if shared_data != theirs_shared:
                self.found.append(f"shared_data {shared_data} != {theirs_shared}")
        shared_data.update(theirs_shared)
        return theirs


def run_side_by_side(checkpoint: Path, explore: bool, seeds=range(20, 24), num_envs: int = 3, plant=None) -> BothTails:
    from tui_eval.config.spec import RunSpec
    from tui_eval.integrations.rllib.kind import RllibKind
    from tui_eval.integrations.rllib.paths.batched_e2m import BatchedEnvToModule

    kind = RllibKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=num_envs,
                                         kind_options={"generic_connectors": True}))
    path: Any = kind.build_path("connectors", explore=explore)
    assert isinstance(path.env_to_module_call, BatchedEnvToModule), path.description
    both = BothTails(path.env_to_module_call, plant)
    path.env_to_module_call = both
    records: list = []
    try:
        path.run(SeedList(seeds), records.append)
    finally:
        path.close()
    assert sorted(r.seed for r in records) == list(seeds)
    return both
