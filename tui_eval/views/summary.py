"""The run's summary (the `--json` document of docs/contract.md), built from the engine's statistics or the log."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tui_eval.engine.decide import decision_summary
from tui_eval.engine.void import void_reason, voided
from tui_eval.records import EpisodeRecord
from tui_eval.stats import ComparisonSummary, ExactProof, RunStats
from tui_eval.stats.declared import declared
from tui_eval.stats.episode_terms import term_differences
from tui_eval.views.format import comparison_reason
from tui_eval.views.module_summary import TEAM, agent_steps, module_ids, module_view, path_keys, team_record


def json_clean(value: Any) -> Any:
    """JSON has no NaN: undefined numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_clean(v) for v in value]
    return value


def replay(meta: dict[str, Any], records: list[EpisodeRecord]) -> RunStats:
    """Statistics of a run rebuilt from its log (for `attach`, exports and finished runs).

    Records carry their explore setting, so the rebuilt statistics are kept apart per (path, explore)
    as the live ones are; the run's return bounds are the log's (``meta["return_bounds"]``, with where
    they came from, when the run stored them) or the ones given on the command line."""
    stats = empty_stats(meta, records)
    for rec in records:
        if rec.path in stats.paths:
            stats.add(rec)
    return stats


def empty_stats(meta: dict[str, Any], records: list[EpisodeRecord]) -> RunStats:
    """The statistics `replay` fills, before any record: the run's paths (the log's, else the records'), explore
    settings, return bounds, margin and exact proof (`tui-eval report` fills them record by record)."""
    paths = meta.get("paths") or sorted({r.path for r in records})
    explore = meta.get("explore") or {}
    spec = meta.get("spec") or {}
    bounds = meta.get("return_bounds") or spec.get("return_bounds")
    return RunStats(paths, deterministic=all(not explore.get(p, True) for p in paths),
                    return_bounds=bounds, margin=spec.get("equivalence_margin"),
                    repeatable=meta.get("repeatable_seeds") is not False,
                    proof=ExactProof.from_json(meta.get("exact_proof")))


def comparison_json(comparison: ComparisonSummary | None) -> dict[str, Any] | None:
    """The summary's ``comparison``: the frozen numbers and, in words, why the verdict is what it is."""
    if comparison is None:
        return None
    return {**comparison.to_json(), "reason": comparison_reason(comparison)}


def _path_entry(s: dict[str, Any], explore: Any, eps_s: Any, steps_s: Any) -> dict[str, Any]:
    """One path's (or one explore setting's) entry of the summary's ``paths``: every declared statistic
    (tui_eval/stats/declared.py), how its intervals were made, and the path's throughput."""
    return {
        "episodes": s["episodes"], "explore": explore, **{stat.key: s.get(stat.key) for stat in declared()},
        "cs_method": s["cs_method"], "episodes_per_s": eps_s, "env_steps_per_s": steps_s,
        "return_bounds": s.get("return_bounds"), "bounds_source": s.get("bounds_source"),
        **{key: s[key] for key in ("terminations", "reward_terms") if key in s},
    }


def build_summary(meta: dict[str, Any], stats: RunStats, records: list[EpisodeRecord],
                  throughput: dict[str, tuple[float, float]] | None = None, *,
                  with_episodes: bool = True) -> dict[str, Any]:
    """The summary document. A path that ran with one explore setting has the entry of docs/contract.md; one
    whose setting changed mid-run has ``"explore": null``, no pooled statistics, and an entry per
    setting under ``by_explore`` (``"on"`` / ``"off"``). ``comparison`` is the newest block's pairing of
    settings; every pairing is under ``comparisons_by_explore`` when there was more than one.
    `with_episodes=False` leaves the ``episodes`` list out (a reader that has the records: most of the cost)."""
    explore = meta.get("explore") or {}
    paths: dict[str, Any] = {}
    for name, path_stats in stats.paths.items():
        s = path_stats.summary()
        eps_s, steps_s = (throughput or {}).get(name, (None, None))
        mixed = "by_explore" in s
        setting = None if mixed else (s.get("explore") if s.get("explore") is not None else explore.get(name))
        paths[name] = _path_entry(s, setting, eps_s, steps_s)
        if mixed:
            paths[name]["by_explore"] = {
                label: _path_entry(part, part["explore"], None, None) for label, part in s["by_explore"].items()
            }
    compared = comparison_json(stats.comparison_summary())
    void = void_reason(meta.get("path_errors") or [])
    if void:
        compared = voided(compared, void)
    document = {
        "status": meta.get("status"), "checkpoint": meta.get("checkpoint"), "kind": meta.get("kind"),
        "env": meta.get("env"),
        "seeds": meta.get("seeds"), "versions": meta.get("versions"), "paths": paths,
        "comparison": compared, **({"episodes": [r.to_json() for r in records]} if with_episodes else {}),
        **modules_summary(meta, records, void),  # multi-agent runs: per module, and the team
    }
    if meta.get("contract") is not None:  # the export's deployment contract against the env
        document["contract"] = meta["contract"]
    terms = reward_terms_summary(list(paths), records)
    if terms is not None:
        document["reward_terms"] = terms
    decision = decision_summary(meta, compared)  # --until-decided / --fail-if-worse
    if decision is not None:
        document["decision"] = decision
    if len(stats.comparisons) > 1:
        document["comparisons_by_explore"] = [voided(comparison_json(c), void) if void else comparison_json(c)
                                              for c in stats.comparisons_by_explore()]
    return json_clean(document)


def reward_terms_summary(paths: list[str], records: list[EpisodeRecord]) -> dict[str, Any] | None:
    """The first two paths' reward terms, paired by seed (an env that names its terms: mjlab, Isaac Lab)."""
    if len(paths) < 2 or not any(r.reward_terms for r in records):
        return None
    a, b = paths[:2]
    pairs, rows = term_differences(records, a, b)
    return {"a": a, "b": b, "pairs": pairs, "terms": [row.to_json() for row in rows]}


def _module_part(meta: dict[str, Any], records: list[EpisodeRecord], project: Callable[[EpisodeRecord], EpisodeRecord],
          module: str | None, void: str | None) -> dict[str, Any]:
    stats = replay(meta, [project(r) for r in records])
    paths = {}
    for name, path_stats in stats.paths.items():
        s = path_stats.summary()
        paths[name] = {**{k: s.get(k) for k in path_keys()}, "mean_agent_steps": agent_steps(records, name, module)}
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
        m: _module_part(meta, multi, module_view(m), m, void) for m in ids}}
    if view != TEAM:
        part[TEAM] = _module_part(meta, multi, team_record, None, void)
    return part
