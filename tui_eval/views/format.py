"""Plain-text formatting of numbers and intervals, shared by the headless table and the app."""

from __future__ import annotations

import math
from typing import Any

from tui_eval.engine.void import VOID, void_line
from tui_eval.stats import ComparisonSummary, returns_identical
from tui_eval.stats.declared import Cell, declared
from tui_eval.views.module_summary import TEAM


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


def verdict_kind(comparison: ComparisonSummary) -> str:
    """"exact" for a per-seed verdict that is conclusive, "per seed" while it is not yet, else
    "statistical"."""
    if not comparison.exact:
        return "statistical"
    return "exact" if comparison.verdict in ("differ", "equivalent") else "per seed"


def could_differ(comparison: ComparisonSummary) -> str:
    """Deterministic paths with no differing seed: "identical on n/n seeds; ≤ x% could differ
    (anytime 95%)" (x: the anytime upper bound on the share of seeds that could still differ)."""
    n = comparison.identical_pairs
    upper = comparison.could_differ_upper
    if upper is None:
        return "no paired seed yet"
    return f"identical on {n}/{n} seeds; ≤ {100 * upper:.1f}% could differ (anytime {level(comparison.alpha)})"


def level(alpha: float) -> str:
    """A confidence level from its alpha: 0.05 -> "95%", 0.025 -> "97.5%"."""
    return f"{100 * (1 - alpha):.4g}%"


def margin_text(comparison: ComparisonSummary) -> str:
    if comparison.margin is None:
        return "no margin yet"
    return f"margin ±{num(comparison.margin, 2)}"


def identical_headline(c: ComparisonSummary) -> str:
    """Deterministic paths, every paired seed the same episode: said first, then what it bounds statistically."""
    n = c.identical_pairs
    upper = c.could_differ_upper
    bound = f"≤ {100 * upper:.1f}% of seeds could differ (anytime {level(c.alpha)})" if upper is not None else ""
    return (f"IDENTICAL on {n}/{n} seeds — {c.a} vs {c.b}, both deterministic; statistically "
            f"{c.verdict.upper()}: {bound}")


def agreement_text(agreement: dict[str, Any] | None) -> str:
    """`max |Δaction| 3e-07 ≤ 1e-05` (or `>`): the paths' actions on the same observations against the tolerance."""
    if not agreement:
        return "actions on the same observations: not compared"
    tol = agreement["tolerance"]["atol"]
    if agreement.get("discrete"):
        return (f"{agreement['mismatches']} of {agreement['steps']} steps send another action" if
                agreement["mismatches"] else f"the same action at all {agreement['steps']} steps")
    return f"max |Δaction| {agreement['max_abs']:.2g} {'≤' if agreement['within'] else '>'} {tol:g}"


def floor_text(floor: dict[str, Any] | None) -> str | None:
    """The noise floor in words: a path against itself, seeds replayed alone."""
    if not floor:
        return None
    where = f"{floor['path']} against itself on {floor['seeds']} seed(s) replayed alone"
    if floor["repeated"] == floor["seeds"]:
        return f"noise floor 0: {where} gave the run's episode every time"
    return (f"noise floor ±{num(floor['diff_spread'], 3)}: {where}, return differences mean "
            f"{num(floor['diff_mean'], 3)}, spread {num(floor['diff_spread'], 3)}, max |d| {num(floor['max_abs'], 3)}")


def verdict_line(comparison: ComparisonSummary | None) -> str:
    if comparison is None:
        return "verdict: — (one path only)"
    c = comparison
    head = f"verdict: {c.verdict.upper()} ({verdict_kind(c)}) — {c.a} − {c.b}: "
    if c.same_policy:  # the policies agree on the same observations: the returns' verdict is statistical
        margin = f" within ±{num(c.margin, 2)}" if c.verdict == "equivalent" and c.margin is not None else ""
        head = (f"verdict: SAME POLICY ({agreement_text(c.agreement)}); returns {c.verdict.upper()}{margin} "
                f"(statistical) — {c.a} − {c.b}: ")
    if c.per_seed == "identical":
        text = "verdict: " + identical_headline(c)
    elif c.exact and not c.differing:
        text = head + could_differ(c)
    else:
        text = (head + f"mean diff {num(c.diff_mean, 2)}, anytime {level(c.alpha_each)} "
                f"{interval(c.diff_cs95, 2)}, {c.paired} paired seeds, {margin_text(c)}")
        if c.margin_source and c.margin is not None:
            text += f" ({c.margin_source})"
    if c.duplicates:
        text += f"; {c.duplicates} duplicate record(s) kept apart"
    if c.repeated:
        text += (f"; {c.repeated} episode(s) repeat another seed's episode (same start, return and length): the "
                 "seeds were not independent")
    floor = floor_text(c.noise_floor)
    return text + f"\n  {comparison_reason(c)}" + (f"\n  {floor}" if floor else "")


def short_return(x: float) -> str:
    """A return as a short number: 6 significant digits, floats shown as floats (21.0, 0.125)."""
    return repr(float(f"{x:.6g}"))


def _general(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def _general_interval(iv: Any) -> str:
    return "none yet" if iv is None else f"[{iv[0]:.4g}, {iv[1]:.4g}]"


def seed_text(block: int, seed: int) -> str:
    return f"seed {seed}" if block == 0 else f"seed {seed} (block {block})"


def comparison_reason(c: ComparisonSummary) -> str:
    """Why the verdict is what it is, in one sentence of numbers."""
    if c.exact:
        return _exact_reason(c)
    text = _statistical_reason(c)
    return f"{text}; {c.exact_reason}" if c.exact_reason and c.proof == "refuted" else text


def _exact_reason(c: ComparisonSummary) -> str:
    first = c.first_difference
    if first is not None:
        ra, rb = first.a, first.b
        if ra.valid != rb.valid:
            what = f"{c.a} {'valid' if ra.valid else 'invalid'} vs {c.b} {'valid' if rb.valid else 'invalid'}"
        elif ra.valid and not returns_identical(ra.ret, rb.ret):
            what = f"{c.a} {short_return(ra.ret)} vs {c.b} {short_return(rb.ret)}"
        else:
            what = f"{c.a} success={ra.success} vs {c.b} success={rb.success} (return {short_return(ra.ret)})"
        text = f"{seed_text(first.block, first.seed)}: {what} with both deterministic"
        if c.proof == "pending":
            return text + "; replaying it on each path alone to prove it"
        if c.proof == "proven":
            return text + (f"; proven: {c.exact_reason}" if c.exact_reason else
                           "; proven: each path, replayed alone, gave its own return again")
        return text
    n, upper = c.identical_pairs, c.could_differ_upper
    if n == 0 or upper is None:
        return f"waiting for paired seeds of {c.a} and {c.b} (both deterministic)"
    text = (f"identical on {n}/{n} seeds; <= {100 * upper:.1f}% could differ (anytime {level(c.alpha)}) "
            "with both deterministic")
    if c.verdict != "equivalent" and c.could_differ_max is not None:
        text += f"; called equivalent once that bound is <= {100 * c.could_differ_max:g}%"
    return text


def _statistical_reason(c: ComparisonSummary) -> str:
    a, b, cs, success_cs = c.a, c.b, c.diff_cs95, c.success_diff_cs95
    at = level(c.alpha_each)
    unit = (f"{c.paired} paired seeds" if c.method == "paired"
            else f"unpaired, {c.valid_a} vs {c.valid_b} valid episodes")
    if cs is not None:
        parts = [f"{a} - {b} = {_general(c.diff_mean)}, anytime {at} {_general_interval(cs)} ({unit})"]
    elif c.method is not None:
        parts = [f"{a} - {b} = {_general(c.diff_mean)} ({unit}), no anytime interval yet: {c.cs_method}"]
    else:
        parts = [f"waiting for returns: {a} {c.valid_a} valid, {b} {c.valid_b} valid, {c.paired} paired"]
    if success_cs is not None:
        parts.append(f"success {a} - {b} = {_general(c.success_diff)}, anytime {at} {_general_interval(success_cs)}")
    margin = "no margin yet" if c.margin is None else f"±{_general(c.margin)}"
    if c.verdict == "differ":
        which = [name for name, iv in (("returns", cs), ("success", success_cs))
                 if iv is not None and (iv[0] > 0.0 or iv[1] < 0.0)]
        why = f"{' and '.join(which)} interval excludes 0"
        if not which:  # decided by a sequence the current one replaced: the decision stands (stats/sticky.py)
            why = f"decided at {c.decided_at} paired seeds, interval {_general_interval(c.decided_cs95)} excluded 0"
    elif c.verdict == "equivalent":
        why = f"inside {margin}" + (f", success inside ±{c.success_margin:g}" if success_cs else "")
    elif cs is not None:
        why = f"includes 0, not inside {margin}"
    else:
        why = "not enough data yet"
    if c.contradicted:
        why = c.contradicted
    return "; ".join(parts) + f": {c.verdict}, {why}"


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


def ended_by(terminations: dict[str, int] | None, shown: int = 2) -> str:
    """`time_out 81% · fell_over 19%`: the shares of the termination terms that ended a path's episodes."""
    if not terminations:
        return "—"
    total = sum(terminations.values())
    ranked = sorted(terminations.items(), key=lambda kv: -kv[1])
    parts = [f"{term} {100 * count / total:.0f}%" for term, count in ranked[:shown]]
    if len(ranked) > shown:
        parts.append(f"+{len(ranked) - shown} more")
    return " · ".join(parts)


def cell_text(cell: Cell, value: Any, entry: dict[str, Any]) -> str:
    """A declared statistic's value as a view shows it (tui_eval/stats/declared.py)."""
    if cell.show == "interval":
        return interval(value, cell.digits)
    if cell.show == "percent":
        return percent(value, entry.get(cell.with_key) if cell.with_key else None)
    if cell.show == "with":
        return f"{num(value, cell.digits)}  {interval(entry.get(cell.with_key or ''), cell.digits)}"
    return num(value, cell.digits)


def summary_table(summary: dict[str, Any]) -> str:
    columns = [stat for stat in declared() if stat.table is not None]
    header = ["path", "episodes", "explore", *(stat.table.header for stat in columns if stat.table), "ep/s",
              "steps/s"]
    named = any(p.get("terminations") for _, p in path_rows(summary["paths"]))
    if named:
        header.append("ended by")
    rows = []
    for name, p in path_rows(summary["paths"]):
        cells = [cell_text(stat.table, p.get(stat.key), p) for stat in columns if stat.table]
        rows.append([name, num(p["episodes"]), on_off(p["explore"]), *cells, num(p["episodes_per_s"]),
                     num(p["env_steps_per_s"], 0)] + ([ended_by(p.get("terminations"))] if named else []))
    text = table(rows, header)
    bounded = [p for _, p in path_rows(summary["paths"]) if p.get("return_bounds")]
    if bounded:
        lo, hi = bounded[0]["return_bounds"]
        text += f"\nreturn bounds [{num(lo, 2)}, {num(hi, 2)}] ({bounded[0].get('bounds_source') or 'given'})"
    methods = sorted({str(p["cs_method"]) for _, p in path_rows(summary["paths"]) if p.get("cs_method")})
    if methods:
        text += "\nanytime 95%: " + "; ".join(methods)
    text += reward_terms_table(summary)
    text += "".join("\n" + line for line in contract_lines(summary.get("contract")))
    text += "\n" + comparison_text(summary)
    text += "".join("\n" + line for line in module_lines(summary))  # multi-agent runs: per module
    decided = decision_line(summary)  # --until-decided / --fail-if-worse
    return text if decided is None else text + "\n" + decided


def decision_line(summary: dict[str, Any]) -> str | None:
    """One line for the summary table and the app: what was decided (the summary's `decision`, from
    tui_eval/engine/decide.py) and after how many pairs."""
    d = summary.get("decision")
    if not d:
        return None
    what = "gate" if d.get("rule") == "gate" else "verdict"
    if d.get("answer") == VOID:
        return f"{what}: none (a path was given up: the comparison is void)"
    if d.get("answer") == "undecided":
        return f"{what}: undecided after {d.get('pairs')} pairs (the budget)"
    how = "stopped early" if d.get("stopped_early") else "at the end"
    return f"{what}: {d.get('answer')} after {d.get('pairs')} pairs ({how})"


def contract_mark(item: dict[str, Any]) -> str:
    """✓ agreed (perhaps rounded), ✗ mismatched, – the export does not say."""
    return "–" if item.get("export") is None else ("✓" if item["ok"] else "✗")


def contract_lines(contract: dict[str, Any] | None) -> list[str]:
    """The export's deployment contract item by item against the env: ✓ / ✗ / – with the note."""
    if not contract:
        return []
    lines = [f"deployment contract: {contract['source']}"]
    for item in contract.get("items", []):
        mark, note = contract_mark(item), item.get("note") or ""
        lines.append(f"  {mark} {item['name']}" + (f": {note}" if note else ""))
    lines += [f"  note: {n}" for n in contract.get("notes", [])]
    return lines


def contract_headline(contract: dict[str, Any] | None) -> str | None:
    """One line: how many items agree, and the first that does not."""
    if not contract:
        return None
    items = contract.get("items", [])
    broken = [i for i in items if not i["ok"]]
    agreed = sum(1 for i in items if i["ok"] and i.get("export") is not None)
    unsaid = sum(1 for i in items if i.get("export") is None)
    head = f"deployment contract: {agreed} ✓, {len(broken)} ✗" + (f", {unsaid} not in the export" if unsaid else "")
    if broken:
        head += f" (first: {broken[0]['name']}: {broken[0].get('note', '')})"
    return head + "".join(f"; {n}" for n in contract.get("notes", []))


def comparison_text(summary: dict[str, Any]) -> str:
    """The summary's verdict in words (IDENTICAL first where it holds) and why, or why it is void."""
    comparison = summary.get("comparison")
    if comparison is not None and comparison.get("verdict") == VOID:
        return void_line(comparison["void"])
    return verdict_line(None if comparison is None else ComparisonSummary.from_json(comparison))


def reward_terms_table(summary: dict[str, Any]) -> str:
    """The first two paths' reward terms (episode sums) paired by seed, the term that moved most first; empty when
    the env names no reward terms."""
    part = summary.get("reward_terms")
    if not part:
        return ""
    a, b = part["a"], part["b"]
    rows = [[t["term"], num(t["mean_a"], 3), num(t["mean_b"], 3), num(t["diff"], 3), interval(t["ci95"], 3)]
            for t in part["terms"]]
    return (f"\nreward terms (episode sums on {part['pairs']} paired seeds; 95% CI of the paired difference, "
            "fixed-n)\n" + table(rows, ["term", a, b, f"{b} − {a}", "95% CI"]) + "\n")


def workers_line(paths: dict) -> str:
    """Where each path's Ray actors run ("connectors: node pid 41, node pid 42 · ..."); empty in-process."""
    return " · ".join(f"{name}: {', '.join(path.placement)}" for name, path in paths.items() if path.placement)


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
