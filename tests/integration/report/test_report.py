"""`tui-eval report` on a finished run of the bundled demo, and `--report FILE` drawn at the run's end: the figure
shows the log's own numbers (read from its axes' artists, not its pixels), PNG and SVG decode, the HTML page is
self-contained; bad input is one line and exit 2."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from matplotlib.image import imread

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.cli_jobs import REPORT_RUN, result_of
from tests.support.common import CARTPOLE, ROOT
from tests.support.jobs import REPORT_IMAGE
from tui_eval.log.store import RunLog
from tui_eval.report import data, figure
from tui_eval.views.paired import paired_points
from tui_eval.views.summary import build_summary, replay


@pytest.fixture(scope="module")
def run(prefetcher, tmp_path_factory):
    """The demo's defaults for 24 episodes per path, with --report end.html (a background job)."""
    proc, folder = result_of(prefetcher, REPORT_RUN, tmp_path_factory.mktemp("report") / "run")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, folder


@pytest.fixture(scope="module")
def logged(run):
    """The run's log read back, its summary as `attach --json` builds it, and its report drawn."""
    log = RunLog(run[1] / "run.sqlite", readonly=True)
    meta, records = log.meta(), log.records()
    report = data.run_report(meta, records, name="run")
    return meta, records, build_summary(meta, replay(meta, records), records), figure.run_figure(report)


def panel(drawn, title: str):
    (found,) = [ax for ax in drawn.axes if ax.get_title().startswith(title)]
    return found


def labelled(artists, label: str):
    (found,) = [a for a in artists if a.get_label() == label]
    return found


def test_the_report_of_a_finished_run_is_a_png(run, capsys, tmp_path):
    log = run[1] / "run.sqlite"
    result = in_process(capsys, "report", log)  # the default: next to the log
    written = run[1] / "run.report.png"
    assert result.returncode == 0 and result.stdout.strip() == str(written), result.stderr
    pixels = imread(written)
    assert pixels.ndim == 3 and pixels.shape[1] >= 1200 and 800 <= pixels.shape[0] <= 1600
    assert pixels[..., :3].std() > 0.05  # drawn, not blank


def test_the_histograms_count_each_paths_valid_episodes_on_the_same_bins(logged):
    meta, records, summary, drawn = logged
    ax = panel(drawn, figure.HISTOGRAM)
    edges = set()
    for path in ("evaluate", "connectors"):
        (stairs,) = [p for p in ax.patches if p.get_label().startswith(f"{path} (")]
        counts, bin_edges, _ = stairs.get_data()
        valid = [r.ret for r in records if r.path == path and not r.invalid]
        assert counts.sum() == len(valid) == summary["paths"][path]["valid"] == 24
        assert np.array_equal(counts, np.histogram(valid, bins=bin_edges)[0])
        edges.add(tuple(bin_edges))
        assert f"mean {summary['paths'][path]['mean']:.4g}" in stairs.get_label()
    assert len(edges) == 1  # the same bins for every path
    assert ax.get_xlabel() == "return"


def test_the_scatter_is_the_logs_paired_returns(logged):
    meta, records, summary, drawn = logged
    ax = panel(drawn, figure.SCATTER)
    pairs = paired_points(records, "evaluate", "connectors")
    assert len(pairs) == summary["comparison"]["paired"] == 24
    shown = np.concatenate([c.get_offsets() for c in ax.collections
                            if c.get_label().startswith(("paired", "identical"))])
    assert sorted(map(tuple, shown.tolist())) == sorted((p.a, p.b) for p in pairs)
    (identical,) = [c for c in ax.collections if c.get_label().startswith("identical")]
    assert len(identical.get_offsets()) == sum(p.identical for p in pairs)
    assert [line.get_label() for line in ax.get_lines()] == ["identity (A = B)"]
    assert ax.get_xlim() == ax.get_ylim()  # the identity line is the diagonal
    assert ax.get_xlabel() == "evaluate (return)" and ax.get_ylabel() == "connectors (return)"


def test_the_narrowing_ends_at_the_summarys_interval(logged):
    meta, records, summary, drawn = logged
    ax = panel(drawn, figure.NARROWING)
    comparison = summary["comparison"]
    low, high = (labelled(ax.get_lines(), f"_interval {end}").get_ydata() for end in ("low", "high"))
    mean = labelled(ax.get_lines(), "mean evaluate − connectors")
    assert [low[-1], high[-1]] == pytest.approx(comparison["diff_cs95"], abs=1e-9)
    assert mean.get_ydata()[-1] == pytest.approx(comparison["diff_mean"])
    assert mean.get_xdata()[-1] == comparison["paired"] == 24
    assert np.all(np.diff(mean.get_xdata()) >= 0)  # against paired seeds, in log order
    widths = [h - lo for lo, h in zip(low, high) if math.isfinite(lo)]
    assert widths[0] > widths[-1] > 0  # it narrowed
    assert labelled(ax.get_lines(), "± equivalence margin").get_ydata()[-1] == pytest.approx(comparison["margin"])


def test_the_rates_and_the_caption_say_the_logs_numbers(logged):
    meta, records, summary, drawn = logged
    ax = panel(drawn, figure.RATES)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["evaluate", "connectors"]
    assert sum(t.get_text() == "no success signal" for t in ax.texts) == 2  # CartPole reports none
    (invalid,) = [c for c in ax.containers if c.get_label().startswith("invalid")]
    assert invalid.lines[0].get_xdata().tolist() == [0.0, 0.0]
    caption = "\n".join(t.get_text() for ax in drawn.axes if ax.get_label() == figure.CAPTION for t in ax.texts)
    assert f"verdict: {summary['comparison']['verdict'].upper()}" in caption
    assert str(CARTPOLE) in caption and "CartPole-v1" in caption
    assert f"seeds {summary['seeds'][0]}:{summary['seeds'][1]}" in caption
    assert "evaluate: explore on, 24 episodes" in caption and "connectors: explore off, 24 episodes" in caption
    assert re.search(r"tui-eval \d+\.\d+", caption)


def test_the_report_option_writes_a_self_contained_page_at_the_runs_end(run):
    proc, folder = run
    page = (folder / "end.html").read_text()
    assert f"report: {folder / 'end.html'}" in proc.stderr
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "</html>" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page)  # nothing fetched
    assert "<script" not in page and "<link" not in page
    table = page[page.index("<table"):page.index("</table>")]
    assert "evaluate" in table and "connectors" in table and "anytime 95%" in table
    assert table.count("no success signal") == 2  # CartPole reports none
    assert "verdict: " in page and str(CARTPOLE) in page


def test_svg_output(run, capsys, tmp_path):
    result = in_process(capsys, "report", run[1] / "run.sqlite", "--out", tmp_path / "r.svg")
    assert result.returncode == 0, result.stderr
    root = ET.parse(tmp_path / "r.svg").getroot()
    assert root.tag.endswith("svg") and float(root.get("width", "0").rstrip("pt")) > 900


@pytest.mark.parametrize("args, needle", [
    (["report", "no-such-run"], "no run 'no-such-run'"),
    (["report", "{log}", "--out", "{tmp}/x.jpg"], "a report is .png, .svg, .html"),
    (["report", "{log}", "--out", "{tmp}/missing/x.png"], "does not exist"),
    (["report", "{log}", "--out", "/proc/x.png"], "cannot write in /proc"),
    (["report", "{log}", "--out", "{tmp}"], "is a folder"),
    (["report", "{tmp}/not-a-log.sqlite"], "is not a tui-eval run log"),
])
def test_bad_input_is_one_line(run, capsys, tmp_path, args, needle):
    (tmp_path / "not-a-log.sqlite").write_text("hello")
    result = in_process(capsys, *[a.format(log=run[1] / "run.sqlite", tmp=tmp_path) for a in args])
    assert_one_line_error(result, needle)


def test_a_bad_report_option_exits_before_the_run_loads(capsys, tmp_path):
    result = in_process(capsys, CARTPOLE, "--headless", "--log", tmp_path / "run.sqlite", "--report",
                        tmp_path / "x.jpg")
    assert_one_line_error(result, "--report", "x.jpg", "a report is .png, .svg, .html")
    assert not (tmp_path / "run.sqlite").exists()
    record = in_process(capsys, "record", CARTPOLE, "--seed", "1", "--out", tmp_path / "c.gif", "--report", "r.png")
    assert_one_line_error(record, "--report")


def test_without_matplotlib_the_command_says_how_to_install_it(run):
    code = ("import sys; sys.modules['matplotlib'] = None\nfrom tui_eval.cli import main\n"
            f"sys.exit(main(['report', {str(run[1] / 'run.sqlite')!r}, '--out', {str(run[1] / 'no.png')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert_one_line_error(proc, "tui-eval report needs matplotlib: pip install 'tui-eval[report]'")
    assert not (run[1] / "no.png").exists()


def test_the_readmes_report_image_is_made_by_its_script(prefetcher, tmp_path):
    """docs/make_report_image.py (a demo run, then its report) makes the README's picture; the one committed is
    small enough for a front page."""
    proc, folder = prefetcher.wait(REPORT_IMAGE, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == str(folder / "report.png") and imread(folder / "report.png").shape[1] >= 1200
    committed = ROOT / "docs" / "assets" / "report.png"
    assert imread(committed).shape[1] >= 1200 and committed.stat().st_size < 300_000
    assert "](docs/assets/report.png)" in (ROOT / "README.md").read_text()
