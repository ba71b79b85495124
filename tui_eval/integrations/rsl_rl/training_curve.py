"""What rsl_rl's training recorded of each checkpoint: `Train/mean_reward` (the mean return of the training
episodes in its buffer, exploring) from the run folder's TensorBoard events, at the checkpoint's iteration.
TensorBoard comes with rsl-rl-lib; a run without events (or with another writer) has no curve."""

from __future__ import annotations

import bisect
from pathlib import Path

TAG = "Train/mean_reward"


def mean_rewards(folder: Path) -> dict[int, float]:
    """iteration -> Train/mean_reward, from every events file in `folder` ({} when there is none)."""
    if not any(folder.glob("events.out.tfevents.*")):
        return {}
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        return {}
    try:
        events = EventAccumulator(str(folder), size_guidance={"scalars": 0})
        events.Reload()
        if TAG not in events.Tags().get("scalars", []):
            return {}
        return {int(e.step): float(e.value) for e in events.Scalars(TAG)}
    except Exception:  # a partial or foreign events file: no curve, never a failed sweep
        return {}


def at(curve: dict[int, float], iteration: int | None) -> float | None:
    """The curve's value at `iteration` (or the last logged before it)."""
    if iteration is None or not curve:
        return None
    steps = sorted(curve)
    i = bisect.bisect_right(steps, iteration) - 1
    return curve[steps[i]] if i >= 0 else None
