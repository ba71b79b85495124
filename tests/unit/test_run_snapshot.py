"""A RunSnapshot built by the log-reader source: the numbers of a real run log, frozen, of all blocks or
of the current block, with the state, blocks and explore settings the log says."""

from __future__ import annotations

import dataclasses

import pytest

from tests.support.ui import append, synthetic_log
from tui_eval.ui.inbox import Inbox
from tui_eval.ui.source import LogSource
from tui_eval.views.snapshot import RunSnapshot


def _read(path) -> LogSource:
    source = LogSource(path, Inbox())
    while source.poll_once() == LogSource.CHUNK:
        pass
    return source


def test_a_log_source_snapshot_holds_the_logs_numbers(tmp_path):
    path = tmp_path / "run.sqlite"
    log = synthetic_log(path, n=30)
    append(log, range(2000, 2010), block=1)
    log.set_meta(blocks=[[1000, None], [2000, None]], state="paused")
    source = _read(path)
    try:
        snap = source.snapshot(with_returns=True)
        assert isinstance(snap, RunSnapshot) and snap.paths == ("evaluate", "connectors")
        assert snap.state == "paused" and [b.start for b in snap.blocks] == [1000, 2000]
        assert snap.done == {"evaluate": 40, "connectors": 40}
        assert snap.summaries["evaluate"]["episodes"] == 40
        invalid = sum(1 for s in [*range(1000, 1030), *range(2000, 2010)] if s % 7 == 0)
        assert snap.summaries["connectors"]["invalid"] == invalid
        assert snap.comparison is not None and snap.comparison.verdict == "differ"  # connectors is 3 higher
        assert snap.returns is not None and snap.returns["evaluate"].n == 40
        assert snap.explore == {"evaluate": False, "connectors": False} and not snap.block_only
        assert snap.throughput["evaluate"][0] > 0 and snap.elapsed > 0

        block = source.snapshot(current_block_only=True)
        assert block.block_only and block.summaries["evaluate"]["episodes"] == 10 and block.returns is None
        light = source.snapshot(numbers=False)
        assert light.summaries == {} and light.comparison is None and light.done == snap.done

        append(log, range(1030, 1035))  # the log grows; the snapshot taken stays as it was
        source.poll_once()
        assert source.snapshot().done["evaluate"] == 45 and snap.done["evaluate"] == 40
        with pytest.raises(dataclasses.FrozenInstanceError):
            snap.state = "done"  # type: ignore[misc]
    finally:
        source.close()


def test_a_finished_log_says_done(tmp_path):
    path = tmp_path / "done.sqlite"
    synthetic_log(path, n=5, status="done")
    source = _read(path)
    try:
        assert source.snapshot().state == "done"
    finally:
        source.close()
