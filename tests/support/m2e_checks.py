"""Runs the `connectors` path's step-by-step loop with the fused module-to-env pipeline and RLlib's real one
side by side on every step, and says where their outputs differ
(for tests/integration/rllib/test_rllib_fused_m2e.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


class SeedList:
    """A feed of the given seeds (block 0), then nothing."""

    cancelled = False
    heartbeat = None

    def __init__(self, seeds) -> None:
        self._seeds = iter(seeds)

    def take(self):
        seed = next(self._seeds, None)
        return None if seed is None else (seed, 0)


def containers(value) -> Any:
    """The containers of a nested value, their types and keys in their own order (`tree.flatten` sorts a
    dict's keys and forgets its type)."""
    if isinstance(value, dict):
        return type(value), [(key, containers(item)) for key, item in value.items()]
    if isinstance(value, (tuple, list)):
        return type(value), [containers(item) for item in value]
    return None


def differences(fused: dict[str, Any], real: dict[str, Any]) -> list[str]:
    """Columns whose values, shapes, dtypes, Python types or containers differ, row by row."""
    import tree

    found = [f"columns {sorted(fused)} != {sorted(real)}"] if sorted(fused) != sorted(real) else []
    for column in set(fused) & set(real):
        if containers(fused[column]) != containers(real[column]):
            found.append(f"{column}: containers {containers(fused[column])} != {containers(real[column])}")
            continue
        a, b = tree.flatten(fused[column]), tree.flatten(real[column])
        if len(a) != len(b):
            found.append(f"{column}: {len(a)} leaves != {len(b)}")
            continue
        for x, y in zip(a, b):
            if type(x) is not type(y) or np.shape(x) != np.shape(y) or np.asarray(x).dtype != np.asarray(y).dtype \
                    or not np.array_equal(x, y):
                found.append(f"{column}: {x!r} != {y!r}")
                break
    return found


class BothModuleToEnv:
    """The fused module-to-env call and the real pipeline on copies of the same input, from the same torch
    random state; the real pipeline's output goes on (so the loop is RLlib's)."""

    def __init__(self, fused, real) -> None:
        self.fused, self.real, self.calls, self.found = fused, real, 0, []

    def __call__(self, *, batch, shared_data, **kwargs):
        import torch
        import tree

        rng = torch.get_rng_state()
        mine = self.fused(batch=tree.map_structure(lambda t: t.clone() if hasattr(t, "clone") else t, batch),
                          shared_data=dict(shared_data), **kwargs)
        torch.set_rng_state(rng)
        theirs = self.real(batch=batch, shared_data=shared_data, **kwargs)
        self.calls += 1
        self.found += self.compare(mine, theirs)
        return theirs

    def compare(self, mine, theirs) -> list:
        return differences(mine, theirs)


def run_side_by_side(checkpoint: Path, explore: bool, seeds=range(20, 26), num_envs: int = 3) -> BothModuleToEnv:
    from tui_eval.config.spec import RunSpec
    from tui_eval.integrations.rllib.kind import RllibKind
    from tui_eval.integrations.rllib.paths.connectors import RllibConnectorsPath
    from tui_eval.integrations.rllib.paths.fused_m2e import FusedModuleToEnv

    kind = RllibKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=num_envs))
    path = RllibConnectorsPath(checkpoint=kind.checkpoint, module_id=kind.module_id, recipe=kind.env,
                               num_envs=num_envs, device="cpu", explore=explore, success_key=None,
                               step_timeout=None, generic_connectors=True)
    assert isinstance(path.module_to_env_call, FusedModuleToEnv), path.description
    both = BothModuleToEnv(path.module_to_env_call, path.module_to_env)
    path.module_to_env_call = both
    records: list = []
    try:
        path.run(SeedList(seeds), records.append)
    finally:
        path.close()
    assert sorted(r.seed for r in records) == list(seeds)
    return both
