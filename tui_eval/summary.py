"""The run's summary (the `--json` document of CLI.md), built from the engine's statistics or the log."""

from __future__ import annotations

import math
from typing import Any

from tui_eval.engine import RunStats
from tui_eval.spec import EpisodeRecord


def _clean(value: Any) -> Any:
    """JSON has no NaN: undefined numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def replay(meta: dict[str, Any], records: list[EpisodeRecord]) -> RunStats:
    """Statistics of a run rebuilt from its log (for `attach`, exports and finished runs)."""
    paths = meta.get("paths") or sorted({r.path for r in records})
    explore = meta.get("explore") or {}
    spec = meta.get("spec") or {}
    stats = RunStats(paths, deterministic=all(not explore.get(p, True) for p in paths),
                     return_bounds=spec.get("return_bounds"), margin=spec.get("equivalence_margin"))
    for rec in records:
        if rec.path in stats.paths:
            stats.add(rec)
    return stats


def build_summary(meta: dict[str, Any], stats: RunStats, records: list[EpisodeRecord],
                  throughput: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    explore = meta.get("explore") or {}
    paths: dict[str, Any] = {}
    for name, path_stats in stats.paths.items():
        s = path_stats.summary()
        eps_s, steps_s = (throughput or {}).get(name, (None, None))
        paths[name] = {
            "episodes": s["episodes"], "explore": explore.get(name), "mean": s["mean"], "std": s["std"],
            "ci95": s["ci95"], "cs95": s["cs95"], "cs_method": s["cs_method"], "iqm": s["iqm"],
            "iqm_ci95": s["iqm_ci95"], "success_rate": s["success_rate"], "success_ci95": s["success_ci95"],
            "success_cs95": s["success_cs95"], "invalid": s["invalid"], "invalid_ci95": s["invalid_ci95"],
            "mean_length": s["mean_length"], "episodes_per_s": eps_s, "env_steps_per_s": steps_s,
        }
    comparison = stats.comparison.summary() if stats.comparison is not None else None
    return _clean({
        "status": meta.get("status"), "checkpoint": meta.get("checkpoint"), "kind": meta.get("kind"), "env": meta.get("env"),
        "seeds": meta.get("seeds"), "versions": meta.get("versions"), "paths": paths,
        "comparison": comparison, "episodes": [r.to_json() for r in records],
    })
