"""The report drawn: one matplotlib figure of a run (`run_figure`) from what `data.py` gathered.

matplotlib's object API only: a `Figure` with its own Agg canvas, never pyplot (no global figure, no display, so
it draws headless and in a run's process); rcParams are read, never set. Imported only when a report is drawn:
matplotlib is the `report` extra. Each kind of mark is one call over numpy arrays (one `stairs` per series, one
`scatter` per marker class), so a run of 100,000 episodes draws in about the time one of 1,000 does. Panels are
found by their titles (the constants below): the tests read their artists' data, not pixels.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from .data import Histogram, Narrowing, PairedScatter, Rate, RunReport, wrapped

HISTOGRAM = "Returns per path (valid episodes)"
SCATTER = "Paired seeds"
NARROWING = "How the verdict narrowed"
RATES = "Success and invalid rates"
MODULE = "Module {}: returns per path"
CAPTION = "caption"  # the caption's axes' label (it has no title)

WIDTH_IN, CAPTION_CHARS, DPI = 14.0, 150, 100
MODULE_COLUMNS, MAX_MODULE_PANELS = 3, 9
LOG_SCALE_FROM = 1000  # paired seeds from which the narrowing is drawn on a log scale (the early ones stay visible)
#: the verdict's colour: the same word, the same colour in every panel
VERDICT_COLORS = {"differ": "#c0392b", "equivalent": "#1e8449", "identical": "#1e8449", "undecided": "#7f8c8d",
                  "void": "#7f8c8d"}


def new_figure(panel_rows: list[float], caption_lines: int) -> tuple[Figure, Any]:
    """A figure with a grid of 6 columns: `panel_rows` heights (inches), then a row for the caption."""
    heights = [*panel_rows, 0.25 + 0.2 * caption_lines]
    figure = Figure(figsize=(WIDTH_IN, sum(heights) + 0.6), layout="constrained", dpi=DPI)
    FigureCanvasAgg(figure)
    return figure, figure.add_gridspec(len(heights), 6, height_ratios=heights)


def run_figure(report: RunReport) -> Figure:
    modules = list(report.modules.items())[:MAX_MODULE_PANELS]
    module_rows = -(-len(modules) // MODULE_COLUMNS)
    caption = wrapped(report.caption, CAPTION_CHARS)
    figure, grid = new_figure([4.3, 3.9, *[2.8] * module_rows], len(caption))
    figure.suptitle(f"tui-eval report: {report.name}", fontsize=14, fontweight="bold")
    draw_histogram(figure.add_subplot(grid[0, :3]), report.histogram, HISTOGRAM)
    draw_scatter(figure.add_subplot(grid[0, 3:]), report.scatter)
    draw_narrowing(figure.add_subplot(grid[1, :4]), report.narrowing, report.verdict, len(report.summary["paths"]))
    draw_rates(figure.add_subplot(grid[1, 4:]), report.rates)
    width = 6 // MODULE_COLUMNS
    for i, (module, drawn) in enumerate(modules):
        row, column = 2 + i // MODULE_COLUMNS, (i % MODULE_COLUMNS) * width
        draw_histogram(figure.add_subplot(grid[row, column:column + width]), drawn, MODULE.format(module))
    verdict = "identical" if report.identical else (report.verdict or "undecided")
    draw_caption(figure.add_subplot(grid[-1, :]), caption, VERDICT_COLORS.get(verdict, "black"))
    return figure


def empty(ax: Axes, title: str, text: str) -> None:
    ax.set_title(title)
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.set_xticks([])
    ax.set_yticks([])


def draw_histogram(ax: Axes, drawn: Histogram | None, title: str) -> None:
    """Each series' counts on the shared edges: a filled step outline per series, its mean dashed."""
    if drawn is None:
        return empty(ax, title, "no valid episode yet")
    ax.set_title(title)
    for i, (label, values, counts) in enumerate(zip(drawn.labels, drawn.returns, drawn.counts)):
        color = f"C{i}"
        mean = f", mean {values.mean():.4g}" if values.size else ""
        ax.stairs(counts, drawn.edges, fill=True, facecolor=(*to_rgb(color), 0.25), edgecolor=color, linewidth=1.5,
                  label=f"{label} ({values.size:,} episodes{mean})")
        if values.size:
            ax.axvline(values.mean(), color=color, linestyle="--", linewidth=1, label=f"_mean {label}")
    ax.set_xlabel("return")
    ax.set_ylabel("episodes")
    ax.legend(fontsize=8, loc="best")


def draw_scatter(ax: Axes, scatter: PairedScatter | None) -> None:
    """A's return against B's per paired seed, the identity line through them; identical seeds as rings; a seed
    with an invalid episode as an x with that path's side on the axis' low edge (it has no return)."""
    if scatter is None or scatter.ret_a.size == 0:
        return empty(ax, SCATTER, "one path only" if scatter is None else "no paired seed yet")
    ax.set_title(f"{SCATTER}: {scatter.a} vs {scatter.b}")
    valid, identical = scatter.valid, scatter.identical & scatter.valid
    shown = np.concatenate([scatter.ret_a[scatter.valid_a], scatter.ret_b[scatter.valid_b]])
    lo, hi = (float(shown.min()), float(shown.max())) if shown.size else (0.0, 1.0)
    pad = 0.04 * (hi - lo) or 0.5
    edge = lo - pad
    ax.axline((lo, lo), slope=1, color="black", linewidth=0.8, label="identity (A = B)")
    differing = valid & ~identical
    crowd = max(int(valid.sum()), 1)  # many points: smaller and fainter, so that where they pile up still shows
    alpha, size = min(0.5, max(0.04, 400 / crowd)), (10.0 if crowd < 2000 else 4.0)
    ax.scatter(scatter.ret_a[differing], scatter.ret_b[differing], s=size, alpha=alpha, color="C0", linewidths=0,
               rasterized=True, label=f"paired seeds, not identical ({int(differing.sum()):,})")
    ax.scatter(scatter.ret_a[identical], scatter.ret_b[identical], s=2.8 * size, facecolors="none",
               edgecolors="#1e8449", linewidths=0.9, alpha=min(1.0, 2 * alpha), rasterized=True,
               label=f"identical on both ({int(identical.sum()):,})")
    broken = ~valid
    if broken.any():
        x = np.where(scatter.valid_a[broken], scatter.ret_a[broken], edge)
        y = np.where(scatter.valid_b[broken], scatter.ret_b[broken], edge)
        ax.scatter(np.nan_to_num(x, nan=edge), np.nan_to_num(y, nan=edge), marker="x", s=30, color="#c0392b",
                   rasterized=True, label=f"an invalid episode ({int(broken.sum()):,}; on the edge)")
    ax.set_xlim(edge - pad, hi + pad)  # the same range on both axes: the identity line is the diagonal
    ax.set_ylim(edge - pad, hi + pad)
    ax.set_xlabel(f"{scatter.a} (return)")
    ax.set_ylabel(f"{scatter.b} (return)")
    for handle in ax.legend(fontsize=8, loc="upper left").legend_handles:
        if handle is not None:
            handle.set_alpha(1.0)  # a faint crowd's marker would be invisible in the legend


def draw_narrowing(ax: Axes, narrowing: Narrowing | None, verdict: str | None, paths: int) -> None:
    """The mean difference A − B and its anytime interval against paired seeds, 0 and ±margin; where the verdict
    was first decided and where its last verdict began. The paired seeds on a log scale from LOG_SCALE_FROM: each
    decade as wide as the next."""
    if narrowing is None:
        return empty(ax, NARROWING, "one path only: nothing to compare" if paths < 2 else "no episode yet")
    n = narrowing
    ax.set_title(f"{NARROWING}: {n.a} − {n.b}, anytime {n.level} interval")
    color = VERDICT_COLORS.get(verdict or "undecided", "#34495e")
    ax.fill_between(n.paired, n.low, n.high, color=color, alpha=0.22, linewidth=0,
                    label=f"anytime {n.level} interval")
    ax.plot(n.paired, n.low, color=color, linewidth=0.8, label="_interval low")
    ax.plot(n.paired, n.high, color=color, linewidth=0.8, label="_interval high")
    ax.plot(n.paired, n.mean, color="black", linewidth=1.4, label=f"mean {n.a} − {n.b}")
    ax.axhline(0.0, color="grey", linewidth=0.8, label="_zero")
    if np.isfinite(n.margin).any():
        ax.plot(n.paired, n.margin, color="grey", linestyle="--", linewidth=1, label="± equivalence margin")
        ax.plot(n.paired, -n.margin, color="grey", linestyle="--", linewidth=1, label="_-margin")
    changes = n.changes
    for i in sorted({*changes[:1], *changes[-1:]}):  # where it was first decided, and since when it says what it says
        more = f" (changed {len(changes)} times)" if i == changes[-1] and len(changes) > 2 else ""
        ax.axvline(n.paired[i], color=VERDICT_COLORS[n.verdicts[i]], linestyle=":", linewidth=1.2,
                   label=f"{n.verdicts[i]} from {int(n.paired[i]):,} paired seeds{more}")
    if verdict == "void":
        ax.text(0.5, 0.5, "VOID: a path was given up", transform=ax.transAxes, ha="center", fontsize=16,
                color="#c0392b", alpha=0.6)
    if n.paired.max() >= LOG_SCALE_FROM and n.paired.min() >= 1:
        ax.set_xscale("log")
    ax.set_ylim(*_narrowing_limits(n))
    ax.set_xlabel("paired seeds")
    ax.set_ylabel(f"{n.a} − {n.b} (return)")
    ax.legend(fontsize=8, loc="upper right")


def _narrowing_limits(n: Narrowing) -> tuple[float, float]:
    """The y range of the later 90% of the points (and 0, ±margin): the first few intervals are wide enough to
    flatten the rest; they run off the top and bottom instead."""
    later = slice(len(n.paired) // 10, None)
    values = np.concatenate([n.low[later], n.high[later], n.mean[later], n.margin[-1:], -n.margin[-1:], [0.0]])
    values = values[np.isfinite(values)]
    lo, hi = float(values.min()), float(values.max())
    pad = 0.08 * (hi - lo) or 1.0
    return lo - pad, hi + pad


def draw_rates(ax: Axes, rates: list[Rate]) -> None:
    """Per row of the summary: the success and the invalid rate (%), each with its anytime 95% interval."""
    ax.set_title(RATES)
    y = np.arange(len(rates), dtype=float)
    for offset, what, color, marker in ((-0.15, "success", "C2", "o"), (0.15, "invalid", "#c0392b", "s")):
        known = [(i, rate, cs or (rate, rate)) for i, r in enumerate(rates) for rate, cs in [_rate(r, what)]
                 if rate is not None]
        if known:
            index, values, bounds = (np.array(column, dtype=float) for column in zip(*known))
            values, bounds = 100 * values, 100 * bounds
            ax.errorbar(values, y[index.astype(int)] + offset, xerr=np.abs(bounds.T - values), fmt=marker,
                        color=color, capsize=3, label=f"{what} (anytime 95%)")
    for i, r in enumerate(rates):
        if r.success is None:
            ax.text(1, i - 0.15, "no success signal", va="center", fontsize=8, color="grey")
    ax.set_yticks(y, [r.label for r in rates])
    ax.set_ylim(len(rates) - 0.4, -0.6)  # the first path on top, as in the table
    ax.set_xlim(-2, 102)
    ax.set_xlabel("% of episodes")
    if ax.containers:  # none before the first episode
        ax.legend(fontsize=8, loc="lower right")


def _rate(rate: Rate, what: str) -> tuple[float | None, tuple[float, float] | None]:
    return (rate.success, rate.success_cs) if what == "success" else (rate.invalid_rate, rate.invalid_cs)


def draw_caption(ax: Axes, lines: list[str], verdict_color: str) -> None:
    """The verdict's lines (up to the first line that is not the verdict's) in its colour, bold; then the rest."""
    ax.set_axis_off()
    ax.set_label(CAPTION)
    head = next((i for i, line in enumerate(lines) if line.startswith("checkpoint ") or line.startswith("runs ")),
                len(lines))
    ax.text(0.0, 1.0, "\n".join(lines[:head]), transform=ax.transAxes, va="top", ha="left", fontsize=9.5,
            fontweight="bold", color=verdict_color)
    ax.annotate("\n".join(lines[head:]), xy=(0.0, 1.0), xycoords="axes fraction", xytext=(0, -1.45 * 9.5 * head),
                textcoords="offset points", va="top", ha="left", fontsize=9)


def save(figure: Figure, out: Path, suffix: str) -> None:
    """The figure as PNG or SVG into `out` (its format told by `suffix`, `out` may be a temporary name)."""
    figure.savefig(out, format=suffix.lstrip("."), dpi=DPI, metadata=_metadata(suffix))


def svg_text(figure: Figure) -> str:
    """The figure as an SVG element to put inline in a page: without the XML prologue, DOCTYPE and RDF metadata
    (a page needs none of them, and they name outside addresses)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata=_metadata(".svg"))
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    start, end = text.find("<metadata>"), text.find("</metadata>")
    return text[:start] + text[end + len("</metadata>"):] if 0 <= start < end else text


def _metadata(suffix: str) -> dict[str, Any]:
    import tui_eval

    creator = f"tui-eval {tui_eval.__version__}"
    return {"Software": creator} if suffix == ".png" else {"Creator": creator, "Date": None}
