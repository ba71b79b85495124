"""rl-zoo3's `evaluations.npz` (SB3's EvalCallback): the mean evaluation return at each step it evaluated, for a
sweep's "what training would pick" column."""

from __future__ import annotations

from pathlib import Path


def eval_returns(folder: Path) -> dict[int, float]:
    """Step -> mean return of that evaluation ({} when the run has no readable evaluations.npz)."""
    file = folder / "evaluations.npz"
    if not file.is_file():
        return {}
    import numpy as np

    try:
        with np.load(file) as data:
            steps, results = data["timesteps"], data["results"]
    except (OSError, KeyError, ValueError):  # a partial file of a run still writing: no curve, not an error
        return {}
    return {int(s): float(np.mean(r)) for s, r in zip(steps, results)}
