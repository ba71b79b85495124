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


def verdict_line(comparison: dict[str, Any] | None) -> str:
    if not comparison:
        return "verdict: — (one path only)"
    kind = "exact" if comparison.get("exact") else "statistical"
    text = (f"verdict: {comparison['verdict'].upper()} ({kind}) — {comparison['a']} − {comparison['b']}: "
            f"mean diff {num(comparison.get('diff_mean'), 2)}, anytime 95% {interval(comparison.get('diff_cs95'), 2)}"
            f", {comparison.get('paired', 0)} paired seeds, margin ±{num(comparison.get('margin'), 2)}")
    if comparison.get("reason"):
        text += f"\n  {comparison['reason']}"
    return text


def summary_table(summary: dict[str, Any]) -> str:
    header = ["path", "episodes", "explore", "mean", "95% CI", "anytime 95%", "IQM", "success", "invalid",
              "mean len", "ep/s", "steps/s"]
    rows = []
    for name, p in summary["paths"].items():
        rows.append([name, num(p["episodes"]), on_off(p["explore"]), num(p["mean"], 2), interval(p["ci95"], 2),
                     interval(p["cs95"], 2), num(p["iqm"], 2), percent(p["success_rate"], p["success_ci95"]),
                     num(p["invalid"]), num(p["mean_length"]), num(p["episodes_per_s"]),
                     num(p["env_steps_per_s"], 0)])
    return table(rows, header) + "\n" + verdict_line(summary.get("comparison"))
