"""`tui-eval report` of a run while it runs (detached, its log read as it grows), then `tui-eval stop`: the run's
own `--report` is drawn as it ends, with the episodes it finished."""

from __future__ import annotations

from matplotlib.image import imread

from tests.support.bad_input import in_process
from tests.support.common import CARTPOLE, cli, episodes_in, wait_until
from tui_eval.log.store import RunLog
from tui_eval.report import data, figure
from tui_eval.runtime import log_lock


def test_a_live_run_is_reported_while_it_runs_and_its_report_drawn_when_stopped(capsys, tmp_path):
    log, at_end = tmp_path / "live.sqlite", tmp_path / "at-end.png"
    # two own loops (the checkpoint against itself: no Ray to start), both greedy: every paired seed identical
    started = cli(CARTPOLE, "--detach", "--paths", "connectors,vs", "--vs", CARTPOLE, "--episodes", "100000",
                  "--num-envs", "2", "--log", log, "--report", at_end, cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    try:
        wait_until(lambda: episodes_in(log) >= 16, timeout=180)
        now = in_process(capsys, "report", "live", "--out", tmp_path / "now.html")
        assert now.returncode == 0, now.stderr
        page = (tmp_path / "now.html").read_text()
        assert "status running" in page and "<svg" in page
        seen = RunLog(log, readonly=True)
        report = data.run_report(seen.meta(), seen.records(), name="live", status="running")
        drawn = figure.run_figure(report)
        assert sum(report.histogram.counts[0]) + sum(report.histogram.counts[1]) <= seen.count()
        assert report.identical and report.scatter.identical.all()
        (scatter,) = [ax for ax in drawn.axes if ax.get_title().startswith(figure.SCATTER)]
        assert any(c.get_label().startswith("identical on both") and len(c.get_offsets()) >= 1
                   for c in scatter.collections)
        caption = "\n".join(report.caption)
        assert caption.startswith("verdict: IDENTICAL on") and "status running" in caption
    finally:
        stopped = in_process(capsys, "stop", "live")  # `tui-eval stop` in this process: no interpreter to start
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stderr
    assert log_lock.holder(log) is None
    assert imread(at_end).shape[1] >= 1200  # drawn before the run let go of its log
    final = RunLog(log, readonly=True)
    assert final.meta()["status"] == "stopped"
    assert "report: " in (tmp_path / "live.out.txt").read_text()
