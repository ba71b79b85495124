"""The typed run lifecycle: statuses and states keep their strings, the run record round-trips through a
real run log, and every way a run ends maps to one status."""

from __future__ import annotations

import json

import pytest

from tui_eval.log.lifecycle import EngineState, RunMeta, RunStatus, final_status
from tui_eval.log.store import RunLog


@pytest.mark.parametrize("status", list(RunStatus))
def test_every_status_round_trips_through_a_run_log(tmp_path, status):
    log = RunLog(tmp_path / "run.sqlite")
    meta = RunMeta(spec={"checkpoint": "ckpt", "episodes": 3}, checkpoint="ckpt", paths=["a", "b"],
                   explore={"a": False, "b": True}, seeds=[0, None], started_at=12.5, status=status,
                   state=EngineState.PAUSED, blocks=[[0, 10], [10, None]], extra={"newer_key": [1, 2]})
    meta.write(log)
    raw = log.meta()
    assert raw["status"] == status.value and type(raw["status"]) is str  # the log keeps the plain string
    assert raw["state"] == "paused" and raw["newer_key"] == [1, 2]
    back = RunMeta.read(log)
    assert back == meta and back.status is status
    assert json.loads(json.dumps(back.to_json())) == raw
    assert back.status.live == (status in ("loading", "running"))


def test_a_partial_record_adds_keys_and_leaves_the_others(tmp_path):
    log = RunLog(tmp_path / "run.sqlite")
    RunMeta(status=RunStatus.LOADING, checkpoint="c").write(log)
    RunMeta(status=RunStatus.DONE, finished_at=3.0).write(log)
    assert log.meta() == {"status": "done", "checkpoint": "c", "finished_at": 3.0}


def test_an_unknown_status_or_state_is_kept_not_fatal():
    meta = RunMeta.from_json({"status": "exploded", "state": "dancing", "paths": ["a"]})
    assert meta.status is None and meta.state is None and meta.paths == ["a"]
    assert meta.shown_status() == "exploded"
    assert meta.to_json() == {"status": "exploded", "state": "dancing", "paths": ["a"]}
    assert RunMeta.from_json({"status": "finished"}).status is RunStatus.DONE  # older logs' word
    assert RunMeta().shown_status() == "?"


@pytest.mark.parametrize(("completed", "interrupted", "given_up", "status"), [
    (True, False, False, RunStatus.DONE),
    (True, False, True, RunStatus.FAILED),
    (True, True, False, RunStatus.DONE),  # q or Ctrl-C after every path finished: the run is done
    (False, True, False, RunStatus.INTERRUPTED),
    (False, True, True, RunStatus.INTERRUPTED),
    (False, False, False, RunStatus.STOPPED),
    (False, False, True, RunStatus.STOPPED),
])
def test_final_status(completed, interrupted, given_up, status):
    assert final_status(completed=completed, interrupted=interrupted, given_up=given_up) is status


def test_the_strings_are_the_documented_ones():
    assert [s.value for s in RunStatus] == ["loading", "running", "done", "stopped", "interrupted", "failed"]
    assert [s.value for s in EngineState] == ["loading", "running", "paused", "stopping", "done"]
    assert EngineState.DONE == "done" and json.dumps({"s": RunStatus.FAILED}) == '{"s": "failed"}'


def test_a_run_spec_round_trips_through_json():
    from tui_eval.config.spec import RunSpec, SeedBlock

    spec = RunSpec(checkpoint="ckpt", paths=["a", "b"], seeds=SeedBlock(100, 200), return_bounds=(0.0, 500.0),
                   explore={"a": True}, episodes=7, imports=["mod"])
    data = json.loads(json.dumps(spec.to_json()))
    assert RunSpec.from_json(data) == spec
    assert RunSpec.from_json({**data, "option_of_a_newer_version": 1}) == spec
