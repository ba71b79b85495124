"""A Tune experiment's or trial's checkpoints for a sweep, each with what training recorded of it: the training
iteration and `env_runners/episode_return_mean` (the windowed mean of training episodes, exploring, that
`ResultGrid.get_best_result` ranks by), both read from the checkpoint's own `algorithm_state.pkl`."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from tui_eval.integrations.base import Candidate

METRIC = "env_runners/episode_return_mean"
_LOGGED = "env_runners--episode_return_mean"  # the key in the checkpoint's metrics logger


def read_candidate(checkpoint: Path) -> Candidate:
    state = _state(checkpoint)
    iteration = state.get("training_iteration")
    metric = None
    try:
        metric = float(state["metrics_logger"]["stats"][_LOGGED]["latest_merged"][0])
    except (KeyError, IndexError, TypeError, ValueError):
        pass
    return Candidate(checkpoint, int(iteration) if isinstance(iteration, int) else None, metric,
                     METRIC if metric is not None else None, picked_by="metric")


def _state(checkpoint: Path) -> dict[str, Any]:
    try:
        with (checkpoint / "algorithm_state.pkl").open("rb") as fh:
            state = pickle.load(fh)
    except Exception:  # an older or partial checkpoint: its place in training is not known
        return {}
    return state if isinstance(state, dict) else {}


def ordered(checkpoints: list[Path]) -> list[Candidate]:
    """The candidates, oldest first (by training iteration, then name)."""
    found = [read_candidate(c) for c in checkpoints]
    return sorted(found, key=lambda c: (c.iteration if c.iteration is not None else -1, str(c.path)))
