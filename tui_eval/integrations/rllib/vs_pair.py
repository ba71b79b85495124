"""`--vs BASELINE_CKPT` between RLlib checkpoints: which pairs of checkpoints compare.

A multi-agent episode's returns are the team's and each module's, a single-agent one's one module's: a
multi-agent checkpoint pairs only with a multi-agent baseline of the same modules (the team, each module and
`--module ID` then compare like with like; each checkpoint's paths map agents with its own
policy_mapping_fn, as its training did). Single-agent pairs are not restricted here.
"""

from __future__ import annotations

from typing import Any

from tui_eval.errors import BadInput


def _shape(kind: Any) -> str:
    return "a multi-agent" if kind.multi_agent else "a single-agent"


def refuse_unpaired(kind: Any, other: Any) -> None:
    """BadInput (one line) when `other` (the `--vs` baseline) cannot be compared with `kind` module by module."""
    if kind.multi_agent != other.multi_agent:
        raise BadInput(f"--vs {other.checkpoint} is {_shape(other)} checkpoint, {kind.checkpoint} {_shape(kind)} "
                       "one: a team's returns and one module's do not pair; compare a multi-agent checkpoint with "
                       "a multi-agent baseline (or single-agent with single-agent)")
    if kind.multi_agent and set(kind.module_ids) != set(other.module_ids):
        raise BadInput(f"--vs {other.checkpoint} has modules {', '.join(other.module_ids)}, {kind.checkpoint} has "
                       f"{', '.join(kind.module_ids)}: per-module comparisons need the same module IDs; compare "
                       "with a baseline of the same modules")
