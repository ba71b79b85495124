"""Plain-text formatting of numbers and intervals, shared by the headless table and the app."""

from __future__ import annotations

import math
from typing import Any


def num(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, int):
        return str(value)
    magnitude = abs(value)
    if magnitude >= 1e5:
        return f"{value:.3g}"
    if 0 < magnitude < 0.1:
        return f"{value:.3f}"
    return f"{value:.{digits}f}"


def interval(bounds: Any, digits: int = 1) -> str:
    if not bounds or bounds[0] is None:
        return "—"
    return f"[{num(bounds[0], digits)}, {num(bounds[1], digits)}]"


def percent(rate: Any, bounds: Any = None) -> str:
    if rate is None:
        return "—"
    text = f"{100 * rate:.0f}%"
    if bounds and bounds[0] is not None:
        text += f" [{100 * bounds[0]:.0f}, {100 * bounds[1]:.0f}]"
    return text


def on_off(flag: Any) -> str:
    return "—" if flag is None else ("on" if flag else "off")


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def verdict_kind(comparison: dict[str, Any]) -> str:
    """"exact" for a per-seed verdict that is conclusive, "per seed" while it is not yet, else
    "statistical"."""
    if not comparison.get("exact"):
        return "statistical"
    return "exact" if comparison.get("verdict") in ("differ", "equivalent") else "per seed"


def could_differ(comparison: dict[str, Any]) -> str:
    """Deterministic paths with no differing seed: "identical on n/n seeds; ≤ x% could differ
    (anytime 95%)" (x: the anytime upper bound on the share of seeds that could still differ)."""
    n = comparison.get("identical_pairs") or 0
    upper = comparison.get("could_differ_upper")
    if upper is None:
        return "no paired seed yet"
    return f"identical on {n}/{n} seeds; ≤ {100 * upper:.1f}% could differ (anytime 95%)"


def margin_text(comparison: dict[str, Any]) -> str:
    margin = comparison.get("margin")
    if margin is None:
        return "no margin yet"
    return f"margin ±{num(margin, 2)}"


def verdict_line(comparison: dict[str, Any] | None) -> str:
    if not comparison:
        return "verdict: — (one path only)"
    kind = verdict_kind(comparison)
    head = f"verdict: {comparison['verdict'].upper()} ({kind}) — {comparison['a']} − {comparison['b']}: "
    if comparison.get("exact") and not comparison.get("differing"):
        text = head + could_differ(comparison)
    else:
        level = f"{100 * (1 - comparison.get('alpha_each', 0.025)):.4g}%"  # each half of the verdict's alpha
        text = (head + f"mean diff {num(comparison.get('diff_mean'), 2)}, anytime {level} "
                f"{interval(comparison.get('diff_cs95'), 2)}, {comparison.get('paired', 0)} paired seeds, "
                f"{margin_text(comparison)}")
        if comparison.get("margin_source") and comparison.get("margin") is not None:
            text += f" ({comparison['margin_source']})"
    if comparison.get("duplicates"):
        text += f"; {comparison['duplicates']} duplicate record(s) kept apart"
    if comparison.get("reason"):
        text += f"\n  {comparison['reason']}"
    return text


def path_rows(summary_paths: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(label, entry) per path; a path whose explore setting changed mid-run gives one row per setting,
    labelled "name [explore on]", and never a pooled row."""
    rows = []
    for name, p in summary_paths.items():
        parts = p.get("by_explore")
        if parts:
            rows += [(f"{name} [explore {label}]", part) for label, part in parts.items()]
        else:
            rows.append((name, p))
    return rows


def summary_table(summary: dict[str, Any]) -> str:
    header = ["path", "episodes", "explore", "mean", "95% CI", "anytime 95%", "IQM", "success", "invalid",
              "mean len", "ep/s", "steps/s"]
    rows = []
    for name, p in path_rows(summary["paths"]):
        rows.append([name, num(p["episodes"]), on_off(p["explore"]), num(p["mean"], 2), interval(p["ci95"], 2),
                     interval(p["cs95"], 2), num(p["iqm"], 2), percent(p["success_rate"], p["success_ci95"]),
                     num(p["invalid"]), num(p["mean_length"]), num(p["episodes_per_s"]),
                     num(p["env_steps_per_s"], 0)])
    text = table(rows, header)
    bounded = [p for _, p in path_rows(summary["paths"]) if p.get("return_bounds")]
    if bounded:
        lo, hi = bounded[0]["return_bounds"]
        text += f"\nreturn bounds [{num(lo, 2)}, {num(hi, 2)}] ({bounded[0].get('bounds_source') or 'given'})"
    methods = sorted({str(p["cs_method"]) for _, p in path_rows(summary["paths"]) if p.get("cs_method")})
    if methods:
        text += "\nanytime 95%: " + "; ".join(methods)
    return text + "\n" + verdict_line(summary.get("comparison"))


def workers_line(paths: dict) -> str:
    """Where each path's Ray actors run ("connectors: node pid 41, node pid 42 · ..."); empty in-process."""
    return " · ".join(f"{name}: {', '.join(path.placement)}" for name, path in paths.items() if path.placement)
