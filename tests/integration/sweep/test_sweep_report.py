"""A sweep's report (`sweep --report FILE` at its end, `tui-eval report SWEEP`): each checkpoint's held-out mean
with its own anytime interval by training iteration, the eliminated, the best, training's pick."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.image import imread

from tests.support.bad_input import in_process
from tests.support.sweep_runs import BEST_RSL
from tui_eval.log.store import RunLog
from tui_eval.report import sweep_figure
from tui_eval.report.sweep_data import sweep_report


@pytest.fixture(scope="module")
def swept(runs, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep_report")
    from tui_eval.cli import main

    code = main(["sweep", str(runs / "rsl"), "--episodes", "400", "--headless", "--log", str(folder / "s.sqlite"),
                 "--report", str(folder / "at-end.png")])
    assert code == 0
    return folder


def test_sweep_report_option_draws_it_at_the_end(swept):
    assert imread(swept / "at-end.png").shape[1] >= 1200


def test_the_sweep_figure_is_the_boards_numbers(swept):
    result = RunLog(swept / "s.sqlite", readonly=True).meta()["sweep_result"]
    report = sweep_report(RunLog(swept / "s.sqlite", readonly=True).meta(), name="s")
    drawn = sweep_figure.sweep_figure(report)
    (ax,) = [a for a in drawn.axes if a.get_title().startswith(sweep_figure.BOARD)]
    rows = {r["checkpoint"]: r for r in result["checkpoints"]}
    shown = {}
    for container in ax.containers:  # an errorbar per class: its points and its bars
        line, _, (bars,) = container
        for x, y, segment in zip(line.get_xdata(), line.get_ydata(), bars.get_segments()):
            shown[x] = (y, (segment[0][1], segment[1][1]))
    assert sorted(shown) == sorted(r["iteration"] for r in rows.values()) == [10, 20, 30, 39]
    for r in rows.values():
        mean, bar = shown[r["iteration"]]
        assert mean == pytest.approx(r["mean"]) and bar == pytest.approx(tuple(r["cs95"]))
    labels = {c.get_label().split(" (")[0]: c for c in ax.containers}
    assert len(labels["eliminated"][0].get_xdata()) == sum(1 for r in rows.values() if r["eliminated_by"])
    marks = {c.get_label(): c.get_offsets() for c in ax.collections if c.get_label().startswith(("best", "training"))}
    pick = result["training_pick"]["checkpoint"]
    assert np.allclose(marks[f"training's pick ({result['training_pick']['by']})"],
                       [[rows[pick]["iteration"], rows[pick]["mean"]]])
    assert np.allclose(marks["best (shown)"], [[rows[BEST_RSL]["iteration"], rows[BEST_RSL]["mean"]]])
    caption = "\n".join(t.get_text() for a in drawn.axes for t in a.texts)
    assert f"best: {BEST_RSL}" in caption and "rank correlation" in caption and "training's pick" in caption


def test_report_of_a_sweep_log_as_a_page(swept, capsys):
    result = in_process(capsys, "report", swept / "s.sqlite", "--out", swept / "s.html")
    assert result.returncode == 0, result.stderr
    page = (swept / "s.html").read_text()
    assert "<svg" in page and BEST_RSL in page and "<table" in page and "held-out mean" in page
