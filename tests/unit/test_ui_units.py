"""The app's plain-Python parts: the bounded inbox, the text charts, the export (no terminal needed)."""

from __future__ import annotations

import csv
import json
import math
import threading

import numpy as np

from tests.support.ui import synthetic_log
from tui_eval.config.spec import SeedBlock
from tui_eval.log.store import RunLog
from tui_eval.records import BlockStarted, EpisodeFinished, EpisodeRecord
from tui_eval.stats import PathStats
from tui_eval.ui.charts import INVALID_MARK, Histogram, bin_count, histogram_lines, progress_bar, sparkline
from tui_eval.ui.records_export import export_paths, export_run


def rec(path: str, seed: int, ret: float = 1.0, invalid: bool = False) -> EpisodeRecord:
    return EpisodeRecord(path=path, seed=seed, ret=ret, length=10, invalid=invalid,
                         reason="boom" if invalid else None)


def test_inbox_is_bounded_and_keeps_invalid_episodes():
    from tui_eval.ui.inbox import Inbox

    inbox = Inbox(keep=50)

    def flood(name: str) -> None:
        for seed in range(20_000):
            inbox.put(EpisodeFinished(rec(name, seed, invalid=(seed == 7))))

    threads = [threading.Thread(target=flood, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    inbox.put(BlockStarted(1, SeedBlock(5, None), "resampled"))
    for t in threads:
        t.join()
    batch = inbox.drain()
    assert batch.arrived == {"a": 20_000, "b": 20_000}
    assert len(batch.episodes) <= 2 * 50 + 50
    assert [r.seed for _, r in batch.episodes if r.invalid] == [7, 7]  # old, but invalid: kept
    assert [n for n, _ in batch.episodes] == sorted(n for n, _ in batch.episodes)  # arrival order
    assert len(batch.events) == 1
    assert not inbox.drain()


def test_sparkline_marks_invalid_episodes_and_fits_its_width():
    points = [(1.0, False), (2.0, False), (float("nan"), True), (3.0, False)]
    line = sparkline(points, width=6, lo=1.0, hi=3.0, style="cyan")
    assert line.cell_len == 6
    assert line.plain[-2] == INVALID_MARK
    assert line.plain[2] == "▁" and line.plain[-1] == "█"
    assert sparkline(points * 10, width=5, lo=1.0, hi=3.0, style="cyan").cell_len == 5


def test_histogram_is_incremental_and_exact():
    stats = PathStats()
    rng = np.random.default_rng(1)
    hist = Histogram()
    for _round in range(5):
        for x in rng.normal(size=300):
            stats.add(EpisodeRecord(path="a", seed=0, ret=float(x), length=1))
        snap = stats.returns_snapshot()
        lo, hi = hist.extent(snap)
        counts = hist.update(snap, lo, hi, 17)
        expected, _ = np.histogram(stats.returns(), bins=17, range=(lo, hi))
        assert counts.tolist() == expected.tolist()
    rows = histogram_lines(counts, height=4, peak=counts.max() / counts.sum(), style="cyan", width=40)
    assert len(rows) == 4 and all(r.cell_len == 40 for r in rows)
    assert rows[0].plain.strip()  # the tallest bin reaches the top row
    assert bin_count(1, 80) == 5 and bin_count(1_000_000, 80) == 80


def test_returns_snapshot_is_frozen_while_the_stats_grow():
    stats = PathStats()
    for x in range(3):
        stats.add(EpisodeRecord(path="a", seed=x, ret=float(x), length=1))
    snap = stats.returns_snapshot()
    for x in range(3, 5000):  # grows the buffer several times
        stats.add(EpisodeRecord(path="a", seed=x, ret=float(x), length=1))
    assert snap.n == 3 and snap.returns.tolist() == [0.0, 1.0, 2.0] and not snap.returns.flags.writeable
    later = stats.returns_snapshot()
    assert later.series is snap.series and later.n == 5000 and later.returns[-1] == 4999.0


def test_progress_bar():
    assert progress_bar(0, 10, 8) == " " * 8
    assert progress_bar(10, 10, 8) == "█" * 8
    assert len(progress_bar(3, 7, 13)) == 13


def test_export_matches_the_log(tmp_path):
    path = tmp_path / "run.sqlite"
    log = synthetic_log(path, n=25)
    log.append(EpisodeRecord(path="evaluate", seed=5000, ret=float("nan"), length=3, invalid=True, reason="nan"))
    csv_path, json_path, count = export_run(path, {"evaluate": (1.0, 100.0), "connectors": (2.0, 200.0)})
    assert (csv_path, json_path) == export_paths(path)
    assert csv_path.name == "run.export.csv"
    records = RunLog(path, readonly=True).records()
    assert count == len(records) == 51
    with csv_path.open() as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["path"], int(r["seed"])) for r in rows] == [(r.path, r.seed) for r in records]
    document = json.loads(json_path.read_text())  # valid JSON even with a NaN return
    assert document["episodes"][-1]["return"] is None
    assert document["paths"]["evaluate"]["episodes"] == 26
    assert document["paths"]["evaluate"]["invalid"] == 1
    assert document["paths"]["connectors"]["episodes_per_s"] == 2.0
    # both paths deterministic, `connectors` 3 more than `evaluate` on every seed: an exact difference
    assert document["comparison"]["verdict"] == "differ"
    assert not math.isnan(document["paths"]["evaluate"]["mean"])
