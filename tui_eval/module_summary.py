"""Multi-agent runs: the summary's per-module part, and its lines in the headless table.

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
from typing import Any

from tui_eval.format import interval, num, table, verdict_line
from tui_eval.spec import EpisodeRecord
from tui_eval.stats import ComparisonSummary

TEAM = "team"
_PATH_KEYS = ("episodes", "mean", "std", "ci95", "cs95", "iqm", "invalid")


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


def _module_view(module: str) -> Callable[[EpisodeRecord], EpisodeRecord]:
    return lambda rec: rec.for_module(module)


def _agent_steps(records: list[EpisodeRecord], path: str, module: str | None) -> float | None:
    steps = [sum(n for m, _, n in r.modules if module is None or m == module) for r in records if r.path == path]
    return sum(steps) / len(steps) if steps else None


def _part(meta: dict[str, Any], records: list[EpisodeRecord], project: Callable[[EpisodeRecord], EpisodeRecord],
          module: str | None, void: str | None) -> dict[str, Any]:
    from tui_eval.summary import comparison_json, replay
    from tui_eval.void import voided

    stats = replay(meta, [project(r) for r in records])
    paths = {}
    for name, path_stats in stats.paths.items():
        s = path_stats.summary()
        paths[name] = {**{k: s.get(k) for k in _PATH_KEYS}, "mean_agent_steps": _agent_steps(records, name, module)}
    compared = comparison_json(stats.comparison_summary())
    return {"paths": paths, "comparison": voided(compared, void) if void else compared}


def modules_summary(meta: dict[str, Any], records: list[EpisodeRecord], void: str | None) -> dict[str, Any]:
    """The summary's per-module keys (see the module docstring); {} for a single-agent run."""
    multi = [r for r in records if r.modules]
    ids = module_ids(multi)
    if not ids:
        return {}
    view = (meta.get("spec") or {}).get("module") or TEAM
    part: dict[str, Any] = {"module_view": view, "modules": {
        m: _part(meta, multi, _module_view(m), m, void) for m in ids}}
    if view != TEAM:
        part[TEAM] = _part(meta, multi, team_record, None, void)
    return part


def module_lines(summary: dict[str, Any]) -> list[str]:
    """The headless table's lines for a multi-agent run: each module's (and the team's) means and verdict."""
    modules = summary.get("modules")
    if not modules:
        return []
    view = summary.get("module_view", TEAM)
    lines = [f"returns above: {'the team (all modules)' if view == TEAM else f'module {view} (--module)'}; "
             "per module:"]
    parts = dict(modules)
    if TEAM in summary:
        parts[TEAM] = summary[TEAM]
    rows = []
    for name, part in parts.items():
        for path, p in part["paths"].items():
            rows.append([name, path, num(p["episodes"]), num(p["mean"], 2), interval(p["ci95"], 2),
                         num(p["mean_agent_steps"])])
    lines.append(table(rows, ["module", "path", "episodes", "mean", "95% CI", "agent steps"]))
    for name, part in parts.items():
        comparison = part.get("comparison")
        if comparison is not None and comparison.get("verdict") == "void":
            lines.append(f"{name}: verdict: VOID")
        else:
            line = verdict_line(None if comparison is None else ComparisonSummary.from_json(comparison))
            lines.append(f"{name}: " + line.splitlines()[0])
    return lines


class ModuleMeans:
    """Each module's mean return per path so far, from the episodes as they finish (the progress line's part)."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = list(paths)
        self._sums: dict[str, dict[str, list[float]]] = {}  # module -> path -> [sum, count]

    def add(self, rec: EpisodeRecord) -> None:
        for module, ret, _ in rec.modules:
            total = self._sums.setdefault(module, {p: [0.0, 0] for p in self.paths}).setdefault(rec.path, [0.0, 0])
            total[0] += ret
            total[1] += 1

    def text(self) -> str:
        """" | p0 evaluate 19.2 connectors 19.2 | p1 ..."; "" for a single-agent run."""
        return "".join(" | " + module + "".join(f" {path} {num(s / n if n else None, 1)}"
                                                for path, (s, n) in paths.items())
                       for module, paths in self._sums.items())
