"""The deployment contract of an mjlab run's `<run>.onnx` (its metadata, as mjlab's exporter writes it) checked
item by item against the env the run builds: all ✓ for a faithful export; a planted mismatch (one joint's stiffness,
two joint names swapped, the action scale halved) named with both values, first among the doctor's findings;
metadata that cannot be read is one note and the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mjlab", reason="the mjlab extra is not installed: pip install -e '.[mjlab]'")

from tests.support.cli_jobs import result_of  # noqa: E402
from tests.support.mjlab_jobs import DOCTOR, PLANTED, UNREADABLE  # noqa: E402
from tests.support.mjlab_run import with_metadata  # noqa: E402
from tui_eval.config.spec import RunSpec  # noqa: E402
from tui_eval.doctor.contract import contract_findings  # noqa: E402
from tui_eval.kinds import load_kind  # noqa: E402

TASK = "Mjlab-Cartpole-Balance"
ITEMS = ["joint order", "joint stiffness", "joint damping", "default joint positions", "action scale",
         "observation terms", "observation scale", "observation clip", "observation history",
         "observation history dim", "command names", "normalizer"]


def contract_of(folder: Path) -> dict:
    return load_kind(RunSpec(checkpoint=str(folder), env_id=TASK, num_envs=1)).deploy_contract().to_json()


def test_a_faithful_export_keeps_its_contract_and_its_deploy_path_is_the_onnx_path(mjlab_run_folder, mjlab_deploy_run):
    proc, summary = mjlab_deploy_run  # deploy,onnx on 8 seeds (and deploy on another task: test_mjlab_deploy.py)
    assert (summary["comparison"]["a"], summary["comparison"]["b"]) == ("deploy", "onnx")
    assert summary["comparison"]["per_seed"] == "identical" and summary["comparison"]["identical_pairs"] == 8
    assert "driven as its deployment contract states" in proc.stderr
    contract = summary["contract"]
    assert [i["name"] for i in contract["items"]] == ITEMS and contract["notes"] == []
    assert all(i["ok"] and i["export"] is not None for i in contract["items"]), contract
    joints = next(i for i in contract["items"] if i["name"] == "joint order")
    assert joints["export"] == joints["env"] == ["slider", "hinge_1"]
    assert f"deployment contract: {mjlab_run_folder.name}.onnx's metadata" in proc.stdout
    assert "  ✓ joint stiffness" in proc.stdout and "✗" not in proc.stdout


@pytest.mark.parametrize("change, item, note", [
    ({"joint_stiffness": "5.000"}, "joint stiffness", "slider: 5 in the export, 1 in the env"),
    ({"joint_names": "hinge_1,slider"}, "joint order",
     "another order: position 0 is hinge_1 in the export, slider in the env"),
    ({"action_scale": "0.500"}, "action scale", "slider: 0.5 in the export, 1 in the env"),
])
def test_a_planted_mismatch_is_named_with_both_values_and_is_the_doctors_first_finding(mjlab_run_folder, tmp_path,
                                                                                       change, item, note):
    contract = contract_of(with_metadata(mjlab_run_folder, tmp_path, **change))
    broken = [i for i in contract["items"] if not i["ok"]]
    assert [i["name"] for i in broken] == [item] and broken[0]["note"] == note
    first = contract_findings(contract, ["runner", "onnx"])[0]
    assert first.stage == "contract" and f"states the {item} otherwise than the env" in first.cause
    assert first.evidence.startswith(f"export: {broken[0]['export']}; env: {broken[0]['env']}")


def test_the_doctor_puts_a_planted_stiffness_first(mjlab_run_folder, prefetcher, tmp_path):
    # diagnose on a copy of the run whose export states a stiffness of 5 (a background job: tests/support/mjlab_jobs.py)
    proc, _ = result_of(prefetcher, DOCTOR, tmp_path / "job")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[1].startswith("1. the export's deployment contract states the joint stiffness "
                                                  "otherwise than the env")


def test_metadata_that_cannot_be_read_is_one_note_and_the_run_goes_on(mjlab_run_folder, prefetcher, tmp_path):
    broken = with_metadata(mjlab_run_folder, tmp_path, joint_damping="soft,stiff")
    contract = contract_of(broken)
    assert [i["name"] for i in contract["items"]] == ["normalizer"]  # read from the graph, not the metadata
    assert contract["notes"] == ["the export's metadata field joint_damping is not a list of numbers: 'soft,stiff'"]
    # a run of 8 seeds on the same planted copy, a background job (tests/support/mjlab_jobs.py)
    proc, out = result_of(prefetcher, UNREADABLE, tmp_path / "job")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["paths"]["onnx"]["episodes"] == 8  # the run goes on with every path
    assert "note: the export's metadata field joint_damping is not a list of numbers" in proc.stdout


def test_a_planted_stiffness_costs_returns_on_the_deploy_path_with_the_same_policy(mjlab_run_folder, prefetcher,
                                                                                   tmp_path):
    # runner,deploy on 32 seeds of a copy whose export states a stiffness of 5 (a background job)
    proc, out = result_of(prefetcher, PLANTED, tmp_path / "job")
    assert proc.returncode == 0, proc.stderr[-3000:]
    comparison = json.loads((out / "summary.json").read_text())["comparison"]
    # the deploy path sends the runner's actions on the same observations, into an env with the contract's gains
    assert comparison["same_policy"] is True and comparison["exact"] is False
    assert comparison["verdict"] == "differ" and comparison["diff_cs95"][0] > 0  # the runner's returns are higher
    assert "the episodes part because their envs differ: after the same actions, the observations differ at step" \
        in comparison["exact_reason"]
    assert "✗ joint stiffness: slider: 5 in the export, 1 in the env" in proc.stdout
