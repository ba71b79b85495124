"""Multi-agent runs: episode records as one module or the team saw them (the summary's per-module part is
built from these in `summary.py`, its lines in `format.py`).

A multi-agent episode record carries each module's return (`EpisodeRecord.modules`); its `ret` is the run's
view: the team return, or one module's under `--module`. The top-level `paths` and `comparison` of the
summary are that view's. This part adds, for every module (and for the team when the view is one module),
the same statistics rebuilt from the records as that module saw them: per path the episodes, mean and
intervals, and a comparison with its own verdict (void when the run's comparison is).

    "module_view": "team" | "<module id>",
    "modules": {"<id>": {"paths": {"<path>": {<path keys>}}, "comparison": {<comparison keys>}}, ...},
    "team": {...the same two parts...}            # only when module_view is a module
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tui_eval.records import EpisodeRecord
from tui_eval.stats.declared import declared

TEAM = "team"


def path_keys() -> tuple[str, ...]:
    """The statistics a module's path entry holds (declared `per_module`)."""
    return tuple(stat.key for stat in declared() if stat.per_module)


def module_ids(records: list[EpisodeRecord]) -> list[str]:
    """The modules of a run's records, in the order the first record lists them; [] for single-agent runs."""
    seen: dict[str, None] = {}
    for rec in records:
        for module, _, _ in rec.modules:
            seen.setdefault(module, None)
    return list(seen)


def team_record(rec: EpisodeRecord) -> EpisodeRecord:
    """The episode as the team saw it: all modules' returns together."""
    return dataclasses.replace(rec, ret=sum(r for _, r, _ in rec.modules), modules=())


def module_view(module: str) -> Callable[[EpisodeRecord], EpisodeRecord]:
    return lambda rec: rec.for_module(module)


def agent_steps(records: list[EpisodeRecord], path: str, module: str | None) -> float | None:
    steps = [sum(n for m, _, n in r.modules if module is None or m == module) for r in records if r.path == path]
    return sum(steps) / len(steps) if steps else None
