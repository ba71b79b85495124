"""What a run's report shows, gathered from its log: plain numbers (numpy), no matplotlib, so that what the picture
says is tested as data. `figure.py` draws it, `html.py` puts it on a page.

- the returns of each path's valid episodes, on bin edges every path shares (a path whose explore setting changed
  mid-run gives one series per setting, as the summary never pools them);
- the first two paths' paired seeds (`views.paired.paired_points`): their returns, which were identical, which had
  an invalid episode;
- how the verdict narrowed: the run's statistics rebuilt record by record in log order, exactly as
  `views.summary.replay` rebuilds them, and the comparison taken at about 200 evenly spaced records; its last point
  is the summary's `comparison` (the statistics rebuilt are the ones the summary is built from);
- each path's success and invalid rate with its anytime interval (the summary's `paths`);
- a multi-agent run's returns per module;
- the caption: the verdict in the words of the headless table, the checkpoint, env, seeds, explore settings,
  episodes and tui-eval's version.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tui_eval.records import EpisodeRecord
from tui_eval.stats import ComparisonSummary, RunStats
from tui_eval.stats.run_statistics import explore_label
from tui_eval.views.format import comparison_text, contract_headline, level, on_off, path_rows, verdict_line
from tui_eval.views.module_summary import module_ids
from tui_eval.views.paired import paired_points
from tui_eval.views.summary import build_summary, empty_stats

#: how many times the comparison is taken along the log for the narrowing interval
NARROWING_POINTS = 200
MAX_BINS = 60


@dataclass(frozen=True)
class Histogram:
    """Valid returns per series (a path, or a path's explore setting), counted on the same bin edges."""

    labels: tuple[str, ...]
    returns: tuple[np.ndarray, ...]
    edges: np.ndarray
    counts: tuple[np.ndarray, ...]


@dataclass(frozen=True)
class PairedScatter:
    """Path a's return against path b's on each seed both finished in the same block (NaN: no return)."""

    a: str
    b: str
    ret_a: np.ndarray
    ret_b: np.ndarray
    valid_a: np.ndarray
    valid_b: np.ndarray
    identical: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        return self.valid_a & self.valid_b


@dataclass(frozen=True)
class Narrowing:
    """The comparison of a and b along the log: per point the paired seeds, the mean difference a − b and its
    anytime interval (NaN before there is one), the margin (NaN while none) and the verdict."""

    a: str
    b: str
    level: str  # the interval's confidence level, as the table says it ("97.5%")
    paired: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    margin: np.ndarray
    verdicts: tuple[str, ...]

    @property
    def changes(self) -> list[int]:
        """The points where the verdict became differ or equivalent (from undecided, or from the other one)."""
        return [i for i, v in enumerate(self.verdicts)
                if v in ("differ", "equivalent") and (i == 0 or self.verdicts[i - 1] != v)]


@dataclass(frozen=True)
class Rate:
    """One row of the summary's paths: success and invalid rates (fractions) with their anytime intervals."""

    label: str
    episodes: int
    success: float | None
    success_cs: tuple[float, float] | None
    invalid: int
    invalid_rate: float | None
    invalid_cs: tuple[float, float] | None


@dataclass(frozen=True)
class RunReport:
    name: str  # the run's name: its log's file name without `.sqlite`
    summary: dict[str, Any]  # the `--json` summary (docs/contract.md) without its `episodes` list
    histogram: Histogram | None
    scatter: PairedScatter | None
    narrowing: Narrowing | None
    rates: list[Rate]
    modules: dict[str, Histogram]
    caption: list[str]  # the verdict's lines first

    @property
    def verdict(self) -> str | None:
        comparison = self.summary.get("comparison")
        return None if comparison is None else comparison.get("verdict")

    @property
    def identical(self) -> bool:
        comparison = self.summary.get("comparison") or {}
        return comparison.get("per_seed") == "identical"


def run_report(meta: dict[str, Any], records: list[EpisodeRecord], *, name: str,
               status: str | None = None) -> RunReport:
    """Everything a run's report shows, from its log's `meta` and `records` (in log order); `status`: the run's
    status as it stands now, where the caller knows better than the log (a process gone)."""
    narrowing, stats = narrowed(meta, records)
    summary = build_summary(meta, stats, records, with_episodes=False)  # the records are at hand
    if status is not None:
        summary["status"] = status
    names = list(stats.names)
    return RunReport(
        name=name, summary=summary, histogram=histogram(returns_by_series(records, names)),
        scatter=paired_scatter(records, names[0], names[1]) if len(names) >= 2 else None,
        narrowing=narrowing, rates=rates(summary), modules=module_histograms(records, names),
        caption=caption(summary, meta, name))


def narrowed(meta: dict[str, Any], records: list[EpisodeRecord],
             points: int = NARROWING_POINTS) -> tuple[Narrowing | None, RunStats]:
    """The comparison at about `points` evenly spaced records, and the statistics of every record (what
    `replay(meta, records)` gives)."""
    stats = empty_stats(meta, records)
    cuts = np.unique(np.linspace(0, len(records), points + 1).round().astype(int))[1:]
    taken: list[ComparisonSummary] = []
    start = 0
    for cut in cuts.tolist():
        for rec in records[start:cut]:
            if rec.path in stats.paths:
                stats.add(rec)
        start = cut
        comparison = stats.comparison_summary()
        if comparison is not None:  # None: one path only
            taken.append(comparison)
    if not taken:
        return None, stats
    last = taken[-1]
    taken = [c for c in taken[:-1] if c.paired] + [last]  # before the first pair nothing is paired to draw against
    return Narrowing(
        a=last.a, b=last.b, level=level(last.alpha_each),
        paired=np.array([c.paired for c in taken], dtype=float),
        mean=_floats(c.diff_mean for c in taken),
        low=_floats(None if c.diff_cs95 is None else c.diff_cs95[0] for c in taken),
        high=_floats(None if c.diff_cs95 is None else c.diff_cs95[1] for c in taken),
        margin=_floats(c.margin for c in taken), verdicts=tuple(c.verdict for c in taken)), stats


def _floats(values: Iterable[float | None]) -> np.ndarray:
    """NaN where there is no number (or an unbounded one): a gap in the line, not a jump to infinity."""
    return np.array([float(v) if v is not None and math.isfinite(v) else math.nan for v in values], dtype=float)


def returns_by_series(records: list[EpisodeRecord], names: list[str]) -> dict[str, list[float]]:
    """Each path's valid returns, in `names`' order; a path that ran with two explore settings gives one series
    per setting ("name [explore on]", as the summary's rows), since its returns belong to neither pooled."""
    settings: dict[str, set[bool]] = {n: set() for n in names}
    for rec in records:
        if rec.path in settings and rec.explore is not None:
            settings[rec.path].add(rec.explore)
    series: dict[str, list[float]] = {}
    for name in names:
        if len(settings[name]) <= 1:
            series[name] = []
        else:
            series.update({f"{name} [explore {explore_label(e)}]": [] for e in sorted(settings[name], reverse=True)})
    for rec in records:
        if rec.path not in settings or rec.invalid or not math.isfinite(rec.ret):
            continue
        label = rec.path if rec.path in series else f"{rec.path} [explore {explore_label(rec.explore)}]"
        series.setdefault(label, []).append(rec.ret)
    return series


def histogram(series: dict[str, list[float]]) -> Histogram | None:
    """The series counted on shared edges (numpy's choice of bins over all of them, at most MAX_BINS); None when
    no series has a return."""
    arrays = {label: np.asarray(values, dtype=float) for label, values in series.items()}
    pooled = np.concatenate(list(arrays.values())) if arrays else np.empty(0)
    if pooled.size == 0:
        return None
    edges = np.histogram_bin_edges(pooled, bins="auto")
    if len(edges) - 1 > MAX_BINS:
        edges = np.histogram_bin_edges(pooled, bins=MAX_BINS)
    return Histogram(labels=tuple(arrays), returns=tuple(arrays.values()), edges=edges,
                     counts=tuple(np.histogram(values, bins=edges)[0] for values in arrays.values()))


def paired_scatter(records: list[EpisodeRecord], a: str, b: str) -> PairedScatter:
    points = paired_points(records, a, b)
    column = lambda field, kind: np.array([getattr(p, field) for p in points], dtype=kind)
    return PairedScatter(a=a, b=b, ret_a=column("a", float), ret_b=column("b", float), valid_a=column("valid_a", bool),
                         valid_b=column("valid_b", bool), identical=column("identical", bool))


def module_histograms(records: list[EpisodeRecord], names: list[str]) -> dict[str, Histogram]:
    """A multi-agent run's returns per module (each module's own bins), per path; {} for a single-agent run."""
    multi = [r for r in records if r.modules and r.path in names]
    found = {}
    for module in module_ids(multi):
        series: dict[str, list[float]] = {name: [] for name in names}
        for rec in multi:
            if not rec.invalid:
                series[rec.path] += [ret for m, ret, _ in rec.modules if m == module and math.isfinite(ret)]
        drawn = histogram(series)
        if drawn is not None:
            found[module] = drawn
    return found


def rates(summary: dict[str, Any]) -> list[Rate]:
    """The summary's rows (a path per explore setting where it changed) with their success and invalid rates."""
    return [Rate(label=label, episodes=entry.get("episodes") or 0, success=entry.get("success_rate"),
                 success_cs=_pair(entry.get("success_cs95")), invalid=entry.get("invalid") or 0,
                 invalid_rate=entry.get("invalid_rate"), invalid_cs=_pair(entry.get("invalid_cs95")))
            for label, entry in path_rows(summary["paths"])]


def _pair(value: Any) -> tuple[float, float] | None:
    return None if not value or value[0] is None else (float(value[0]), float(value[1]))


def caption(summary: dict[str, Any], meta: dict[str, Any], name: str) -> list[str]:
    """The verdict as the headless table words it (IDENTICAL first where it holds), each module's verdict, then
    what ran: checkpoint, env, seeds, explore settings, episodes, status and version."""
    import tui_eval

    lines = [line.strip() for line in comparison_text(summary).splitlines()]
    contract = contract_headline(summary.get("contract"))
    if contract is not None:
        lines.append(contract)
    for module, part in (summary.get("modules") or {}).items():
        compared = part.get("comparison")
        if compared is not None and compared.get("verdict") != "void":
            lines.append(f"module {module}: " + verdict_line(ComparisonSummary.from_json(compared)).splitlines()[0])
    lines.append(f"checkpoint {summary.get('checkpoint')} ({summary.get('kind')}) · env {summary.get('env')} · "
                 + seeds_text(summary.get("seeds"), meta.get("blocks")))
    lines.append(" · ".join(
        f"{label}: explore {on_off(entry.get('explore'))}, {entry.get('episodes')} episodes ({entry.get('invalid')} "
        "invalid)" for label, entry in path_rows(summary["paths"])))
    made_by = (meta.get("versions") or {}).get("tui-eval")
    version = tui_eval.__version__ + (f" (the run: {made_by})" if made_by and made_by != tui_eval.__version__ else "")
    lines.append(f"run {name} · status {summary.get('status')} · tui-eval {version}")
    return lines


def seeds_text(seeds: Any, blocks: Any) -> str:
    """`seeds 1000:1100`, and the blocks when the run drew more than one (a resample, an explore change)."""
    text = "seeds —" if not seeds else f"seeds {seeds[0]}:{'' if seeds[1] is None else seeds[1]}"
    if blocks and len(blocks) > 1:
        shown = ", ".join(f"{b[0]}:{'' if b[1] is None else b[1]}" for b in blocks[:4])
        text += f" in {len(blocks)} blocks ({shown}{', …' if len(blocks) > 4 else ''})"
    return text


def wrapped(lines: list[str], width: int) -> list[str]:
    """The caption's lines cut at `width` characters, a continuation indented."""
    return [part for line in lines for part in textwrap.wrap(line, width, subsequent_indent="    ") or [""]]
