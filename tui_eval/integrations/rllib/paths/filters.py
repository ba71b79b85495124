"""Observation filters of RLlib's env-to-module pipelines (MeanStdFilter) on both RLlib paths.

RLlib's MeanStdFilter updates its running mean and std with every observation it normalises, also while
evaluating (its `update_stats=True` default). `Algorithm.evaluate()` sets the evaluation runner's filter
back to the training runner's statistics at the start of every call (`sync_env_runner_states`; the
training runner's are the checkpoint's), then updates it through the call; the `connectors` path
restores the checkpoint's statistics once and updates them through the whole run. The observations a
policy sees then depend on how the episodes fall into evaluate() calls, and the paths cannot match seed
by seed. A deployed policy normalises with the statistics it was saved with: `--freeze-filters` sets
`update_stats` off on both paths, each filter normalising with the checkpoint's statistics, and both
paths then replay the same observations seed by seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_eval.integrations.rllib.paths.layout import connector_dir

#: env-to-module pieces that update statistics while they run (the folder name RLlib saves each under)
UPDATING_FILTERS = ("MeanStdFilter",)


def filters_in_checkpoint(checkpoint: Path) -> list[str]:
    """The updating filter pieces the checkpoint's env-to-module pipeline holds (read from its folders)."""
    folder = connector_dir(checkpoint, "env_to_module")
    return [name for name in UPDATING_FILTERS if (folder / name).is_dir()]


def freeze_filters(pipeline: Any) -> int:
    """Stop every MeanStdFilter of `pipeline` from updating its statistics; how many there are."""
    from ray.rllib.connectors.env_to_module import MeanStdFilter

    frozen = 0
    for piece in getattr(pipeline, "connectors", []):
        if isinstance(piece, MeanStdFilter):
            piece._update_stats = False  # what MeanStdFilter(update_stats=False) sets; read at each call
            frozen += 1
    return frozen


def freeze_runner_filters(runner: Any) -> int:
    """`freeze_filters` on an EnvRunner's env-to-module pipeline (a callable for foreach_env_runner)."""
    return freeze_filters(getattr(runner, "_env_to_module", None))


def filters_fact(names: list[str], frozen: bool) -> str:
    """One line for the run's facts: what the filters do on each path, and where that comes from."""
    pieces = ", ".join(names)
    if frozen:
        return (f"{pieces} frozen at the checkpoint's statistics on both paths, as deployed (--freeze-filters): "
                "comparable seed by seed")
    return (f"{pieces} updating while evaluating (library default): evaluate() restarts it from the checkpoint's "
            "statistics at every call, connectors carries it through the run, so the paths normalise with other "
            "statistics and may differ seed by seed; --freeze-filters freezes it on both")
