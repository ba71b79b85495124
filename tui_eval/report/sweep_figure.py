"""A sweep's report drawn (matplotlib's object API, as figure.py): each checkpoint's held-out mean with its own
anytime 95% interval against its training iteration; the eliminated hollow and grey, the best (or the leader) a
star, training's pick ringed; training's own number on a second axis, to see how far it ranks them alike."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .data import wrapped
from .figure import CAPTION_CHARS, draw_caption, new_figure
from .sweep_data import SweepPoint, SweepReport

BOARD = "Held-out mean return by checkpoint"
MAX_NAMED = 20  # checkpoints named next to their point; more would hide the points


def sweep_figure(report: SweepReport) -> Figure:
    caption = wrapped(report.caption, CAPTION_CHARS)
    figure, grid = new_figure([6.0], len(caption))
    figure.suptitle(f"tui-eval report: {report.name} (sweep)", fontsize=14, fontweight="bold")
    draw_board(figure.add_subplot(grid[0, :]), report)
    outcome = report.result.get("outcome")
    draw_caption(figure.add_subplot(grid[-1, :]), caption, "#1e8449" if outcome == "best" else "black")
    return figure


def draw_board(ax: Axes, report: SweepReport) -> None:
    ax.set_title(f"{BOARD} (anytime 95% intervals)")
    points = report.points
    racing, out = [p for p in points if not p.eliminated], [p for p in points if p.eliminated]
    if racing:
        errorbars(ax, racing, f"in the race ({len(racing)})", color="C0", face="C0")
    if out:
        errorbars(ax, out, f"eliminated ({len(out)})", color="#95a5a6", face="white")
    top = point(points, report.best or report.leader)
    if top is not None:
        ax.scatter([top.x], [top.mean], marker="*", s=260, color="#f1c40f", edgecolors="black", zorder=4,
                   label="best (shown)" if report.best else "leader (not shown best)")
    pick = point(points, report.pick)
    if pick is not None:
        ax.scatter([pick.x], [pick.mean], marker="o", s=330, facecolors="none", edgecolors="#c0392b", linewidths=2,
                   zorder=5, label=f"training's pick ({report.pick_by})")
    if len(points) <= MAX_NAMED:
        for p in points:
            ax.annotate(p.checkpoint, (p.x, p.high), xytext=(0, 5), textcoords="offset points", ha="center",
                        fontsize=8)
    twin = draw_training_metric(ax, points, report.training_metric_name)
    ax.set_xlabel(report.x_label)
    ax.set_ylabel("held-out mean return")
    handles, labels = ax.get_legend_handles_labels()
    if twin is not None:  # one legend for both axes; the checkpoints drawn over training's line
        more = twin.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
        ax.set_zorder(twin.get_zorder() + 1)
        ax.patch.set_visible(False)
    ax.legend(handles, labels, fontsize=8, loc="best")


def errorbars(ax: Axes, points: list[SweepPoint], label: str, *, color: str, face: str) -> None:
    """The checkpoints' means with their anytime intervals, one call for the class."""
    x, mean, low, high = (np.array(column, dtype=float) for column in zip(*((p.x, p.mean, p.low, p.high)
                                                                            for p in points)))
    ax.errorbar(x, mean, yerr=np.vstack([mean - low, high - mean]), fmt="o", color=color, markerfacecolor=face,
                capsize=4, linewidth=1.4, markersize=7, label=label)


def point(points: list[SweepPoint], name: str | None) -> SweepPoint | None:
    return next((p for p in points if p.checkpoint == name), None)


def draw_training_metric(ax: Axes, points: list[SweepPoint], name: str | None) -> Axes | None:
    """Training's own number per checkpoint, on an axis of its own (its units are its own); None without one."""
    known = [p for p in points if p.training_metric is not None]
    if not known:
        return None
    twin = ax.twinx()
    twin.plot([p.x for p in known], [float(p.training_metric or 0.0) for p in known], color="#7f8c8d", linestyle="--",
              marker=".", linewidth=1, label=f"training: {name or 'its metric'}")
    twin.set_ylabel(f"training's number ({name or 'its metric'})", color="#7f8c8d")
    return twin
