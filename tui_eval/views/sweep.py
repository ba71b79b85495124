"""A sweep's leaderboard in words and numbers (`tui-eval sweep`'s table, the app's board) and its forest plot:
each checkpoint's held-out mean with its anytime interval, by training iteration."""

from __future__ import annotations

from typing import Any

from tui_eval.views.format import interval, num, percent
from tui_eval.views.format import table as text_table


def leaderboard(result: dict[str, Any]) -> str:
    """The table, then what it means (the headless output)."""
    return "\n".join([board_table(result), *board_lines(result)])


def board_table(result: dict[str, Any]) -> str:
    rows = []
    for r in result["checkpoints"]:
        status = f"out r{r['eliminated_at']} < {r['eliminated_by']}" if r["eliminated_by"] else "in"
        rows.append([str(r["rank"]), r["checkpoint"], num(r["iteration"], 0), num(r["mean"], 2),
                     interval(r["cs95"], 2), status, interval(r["vs_leader_cs"], 2), str(r["episodes"]),
                     num(r["training_metric"], 2), percent(r.get("success_rate")), str(r["invalid"])])
    return text_table(rows, ["rank", "checkpoint", "iter", "held-out mean", "anytime 95%", "status",
                             "vs leader (anytime)", "episodes", "training", "success", "invalid"])


def board_lines(result: dict[str, Any]) -> list[str]:
    """The outcome, training's pick and the rank correlation, in words."""
    lines = [outcome_line(result)]
    pick = result["training_pick"]
    if pick is not None:
        lines.append(f"training's pick ({pick['by']}): {pick['checkpoint']}, held-out rank {pick['held_out_rank']} of "
                     f"{len(result['checkpoints'])}")
    if result["rank_correlation"] is not None:
        lines.append(f"rank correlation of training's number with the held-out mean: {result['rank_correlation']:.2f}")
    return lines


def outcome_line(result: dict[str, Any]) -> str:
    level = f"{100 * (1 - result['alpha']):g}%"
    if result["outcome"] == "best":
        return (f"best: {result['best']} (every other checkpoint shown worse on paired held-out seeds; the best "
                f"is eliminated with probability <= {result['alpha']:g}, anytime {level}); {result['episodes']} "
                f"episodes of a budget of {result['budget']}")
    if result["outcome"] == "indistinguishable":
        return (f"indistinguishable: {', '.join(result['indistinguishable'])} are within the equivalence margin of "
                f"each other (anytime {level}); {result['episodes']} episodes")
    if result["outcome"] == "stopped" and not result["episodes"]:
        return "stopped before the first round ended: nothing was compared"
    if result["outcome"] == "stopped":
        return (f"stopped after {result['rounds']} round(s) ({result['episodes']} episodes): {result['leader']} leads, "
                "not yet shown best")
    racing = ", ".join(r["checkpoint"] for r in result["checkpoints"] if not r["eliminated_by"])
    if result["outcome"] is None:
        return f"after round {result['rounds']}: {result['leader']} leads; still in the race: {racing}"
    return f"budget spent ({result['episodes']} episodes): {result['leader']} leads, not yet shown best; still in " \
        f"the race: {racing}"


def forest(result: dict[str, Any], width: int = 60) -> list[str]:
    """One line per checkpoint, by training iteration: its held-out mean (●) and anytime interval (├─┤) against
    the leader's, on one scale; the eliminated dimmed by a leading '·'."""
    rows = sorted(result["checkpoints"], key=lambda r: (r["iteration"] is None, r["iteration"] or 0, r["checkpoint"]))
    leader = next(r for r in result["checkpoints"] if r["checkpoint"] == result["leader"])
    spans: list[tuple[float, tuple[float, float]] | None] = []
    for r in rows:
        if r["mean"] is None:
            spans.append(None)
            continue
        cs = r["vs_leader_cs"]
        base = leader["mean"] or 0.0
        spans.append((r["mean"], (base + cs[0], base + cs[1]) if cs else (r["mean"], r["mean"])))
    values = [v for s in spans if s for v in (s[0], *s[1])]
    if not values:
        return []
    lo, hi = min(values), max(values)
    scale = (width - 1) / (hi - lo) if hi > lo else 0.0
    label_width = max(len(r["checkpoint"]) for r in rows)
    lines = []
    for r, s in zip(rows, spans):
        bar = [" "] * width
        if s is not None:
            a, b = (int(round((v - lo) * scale)) for v in s[1])
            for i in range(a, b + 1):
                bar[i] = "─"
            bar[a], bar[b] = "├", "┤"
            bar[int(round((s[0] - lo) * scale))] = "●"
        mark = "·" if r["eliminated_by"] else " "
        lines.append(f"{mark}{r['checkpoint']:<{label_width}} {''.join(bar)} {num(r['mean'], 2)}")
    lines.append(f" {'':<{label_width}} {num(lo, 2)}{num(hi, 2):>{max(1, width - len(num(lo, 2)))}}")
    return lines
