"""The report of logs the demo does not make, written with the run log itself (RunLog.append, as a run writes it): a
multi-agent run with invalid and identical episodes, a path whose explore setting changed mid-run, a sweep before
its first round ended."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.bad_input import assert_one_line_error, in_process
from tui_eval.log.store import RunLog
from tui_eval.records import EpisodeRecord
from tui_eval.report import data, figure, write_report
from tui_eval.views.summary import build_summary, replay

SEEDS = 80


def write(path, records, **meta) -> None:
    log = RunLog(path)
    log.set_meta(checkpoint="/ckpt/two_teams", kind="rllib", env="TwoTeams-v0", seeds=[0, SEEDS], blocks=[[0, SEEDS]],
                 status="done", **meta)
    for rec in records:
        log.append(rec)
    log.close()


def multi_agent_records() -> list[EpisodeRecord]:
    """Seed s: both paths alike on even seeds; b scores more on odd ones; a is invalid on every 10th, b on 25th."""
    records = []
    for seed in range(SEEDS):
        for path in ("a", "b"):
            invalid = (path == "a" and seed % 10 == 3) or (path == "b" and seed % 25 == 7)
            lead = 5.0 if path == "b" and seed % 2 else 0.0
            modules = (("m0", 10.0 + seed % 7 + lead, 40), ("m1", 3.0 + seed % 3, 40))
            records.append(EpisodeRecord(path=path, seed=seed, ret=float("nan") if invalid else sum(r for _, r, _ in
                                         modules), length=40, invalid=invalid, reason="boom" if invalid else None,
                                         explore=False, modules=modules))
    return records


@pytest.fixture(scope="module")
def multi_agent(tmp_path_factory):
    path = tmp_path_factory.mktemp("logs") / "teams.sqlite"
    write(path, multi_agent_records(), paths=["a", "b"], explore={"a": False, "b": False})
    log = RunLog(path, readonly=True)
    meta, records = log.meta(), log.records()
    report = data.run_report(meta, records, name="teams")
    return path, meta, records, report, figure.run_figure(report)


def axes_titled(drawn, title: str):
    return [ax for ax in drawn.axes if ax.get_title().startswith(title)]


def test_each_module_has_its_returns_per_path(multi_agent):
    path, meta, records, report, drawn = multi_agent
    for module in ("m0", "m1"):
        (ax,) = axes_titled(drawn, figure.MODULE.format(module))
        for name in ("a", "b"):
            (stairs,) = [p for p in ax.patches if p.get_label().startswith(f"{name} (")]
            counts, edges, _ = stairs.get_data()
            expected = [r for m, r, _ in (x for rec in records if rec.path == name and not rec.invalid
                                          for x in rec.modules) if m == module]
            assert counts.sum() == len(expected) and np.array_equal(counts, np.histogram(expected, edges)[0])
    assert set(report.summary["modules"]) == {"m0", "m1"}
    caption = "\n".join(report.caption)
    assert "module m0: verdict:" in caption and "module m1: verdict:" in caption


def test_identical_and_invalid_seeds_are_marked(multi_agent):
    path, meta, records, report, drawn = multi_agent
    (ax,) = axes_titled(drawn, figure.SCATTER)
    marks = {c.get_label().split(" (")[0]: c.get_offsets() for c in ax.collections}
    broken = [s for s in range(SEEDS) if s % 10 == 3 or s % 25 == 7]
    identical = [s for s in range(SEEDS) if s % 2 == 0 and s not in broken]
    assert len(marks["an invalid episode"]) == len(broken)
    assert len(marks["identical on both"]) == len(identical)
    assert len(marks["paired seeds, not identical"]) == SEEDS - len(broken) - len(identical)
    edge = marks["an invalid episode"].min()
    valid = np.concatenate([marks["paired seeds, not identical"], marks["identical on both"]])
    assert edge < valid.min() and ax.get_xlim()[0] < edge  # on the low edge, inside the axes
    a_invalid = [s for s in broken if s % 10 == 3]
    assert (marks["an invalid episode"][:, 0] == edge).sum() == len(a_invalid)


def test_the_narrowing_ends_at_the_summarys_interval_and_the_verdict_is_marked(multi_agent):
    path, meta, records, report, drawn = multi_agent
    comparison = build_summary(meta, replay(meta, records), records)["comparison"]
    assert comparison["verdict"] == "differ"  # b leads by 5 on every odd seed, both deterministic
    n = report.narrowing
    assert [n.low[-1], n.high[-1]] == pytest.approx(comparison["diff_cs95"])
    assert n.paired[-1] == comparison["paired"] and len(n.paired) <= data.NARROWING_POINTS
    (ax,) = axes_titled(drawn, figure.NARROWING)
    (decided,) = [line for line in ax.get_lines() if line.get_label().startswith("differ from")]
    assert n.verdicts[-1] == "differ" and decided.get_xdata()[0] == n.paired[n.changes[-1]]
    assert all(v == "undecided" for v in n.verdicts[:n.changes[0]])


def test_a_path_whose_explore_changed_gives_a_series_per_setting(tmp_path):
    records = [EpisodeRecord(path=p, seed=s, ret=float(s % 9), length=9, block=0 if s < 20 else 1,
                             explore=(p == "a" and s < 20)) for s in range(40) for p in ("a", "b")]
    write(tmp_path / "mixed.sqlite", records, paths=["a", "b"], explore={"a": False, "b": False})
    log = RunLog(tmp_path / "mixed.sqlite", readonly=True)
    report = data.run_report(log.meta(), log.records(), name="mixed")
    assert report.histogram.labels == ("a [explore on]", "a [explore off]", "b")
    assert [int(c.sum()) for c in report.histogram.counts] == [20, 20, 40]
    assert [r.label for r in report.rates] == ["a [explore on]", "a [explore off]", "b"]
    write_report(tmp_path / "mixed.sqlite", tmp_path / "mixed.png")
    assert (tmp_path / "mixed.png").stat().st_size > 10_000


def test_a_sweep_before_its_first_round_says_so(capsys, tmp_path):
    log = RunLog(tmp_path / "sweep-early.sqlite")
    log.set_meta(kind="sweep", paths=["model_1.pt", "model_2.pt"], status="running",
                 sweep={"argv": [], "checkpoints": [], "path": "runner", "budget": 100})
    log.close()
    result = in_process(capsys, "report", tmp_path / "sweep-early.sqlite")
    assert_one_line_error(result, "no round of sweep sweep-early has ended yet; try again later")
