"""The deployment contract of an Isaac Lab run: its IO descriptors against its params/env.yaml item by item, and
the exported policy's sizes against both. A faithful run is all ✓; a planted mismatch (one joint's stiffness, two
joint names swapped, the action scale halved, an observation history) is named with both values and is the
doctor's first finding; a file that cannot be read is one note and the run goes on. The run folder is written in
Isaac Lab's own dumped formats around the rsl_rl demo policy (tests/support/isaaclab_run.py)."""

from __future__ import annotations

import json

import pytest

from tests.support.common import cli
from tests.support.isaaclab_run import env_cfg, io_descriptors, with_io, write_run
from tui_eval.config.spec import RunSpec
from tui_eval.doctor.contract import contract_findings
from tui_eval.integrations.rsl_rl.run_folder import ISAAC_LAB, framework_of
from tui_eval.kinds import load_kind

ITEMS = ["joint order", "joint stiffness", "joint damping", "default joint positions", "action scale",
         "action offset", "action clip", "observation terms", "observation scale", "observation clip",
         "observation history", "observation size", "action size", "normalizer"]


def contract_of(checkpoint) -> dict:
    return load_kind(RunSpec(checkpoint=str(checkpoint))).deploy_contract().to_json()


def test_a_faithful_run_keeps_its_contract_item_by_item(tmp_path):
    checkpoint = write_run(tmp_path)
    assert framework_of(checkpoint.parent) == ISAAC_LAB  # read from env.yaml's module strings, no tag needed
    contract = contract_of(checkpoint)
    assert contract["source"] == ("IO_descriptors.yaml (Isaac Lab's IO descriptors) and exported/policy.pt against "
                                  "the run's params/env.yaml")
    assert [i["name"] for i in contract["items"]] == ITEMS and contract["notes"] == []
    assert all(i["ok"] for i in contract["items"]), [i for i in contract["items"] if not i["ok"]]
    by_name = {i["name"]: i for i in contract["items"]}
    assert by_name["joint order"]["export"] == by_name["joint order"]["env"] == ["slide_x", "slide_y"]
    assert by_name["joint stiffness"]["env"] == [40.0, 30.0]  # the actuator's {regex: value}, per joint
    assert by_name["action offset"]["env"] == [0.4, -0.8]  # use_default_offset: init_state.joint_pos
    assert (by_name["observation size"]["export"], by_name["observation size"]["env"]) == (4, 4)


def _stiffness_one(io):
    io["articulations"]["robot"]["default_joint_stiffness"][1] = 1.0


def _swapped(io):
    io["actions"][0]["joint_names"] = ["slide_y", "slide_x"]


def _halved(io):
    io["actions"][0]["scale"] = 0.25


@pytest.mark.parametrize("change, item, note", [
    (_stiffness_one, "joint stiffness", "slide_y: 1 in the export, 30 in the env"),
    (_swapped, "joint order", "another order: position 0 is slide_y in the export, slide_x in the env"),
    (_halved, "action scale", "slide_x: 0.25 in the export, 0.5 in the env"),
])
def test_a_planted_mismatch_is_named_with_both_values_and_is_the_doctors_first_finding(tmp_path, change, item,
                                                                                       note):
    contract = contract_of(with_io(tmp_path, change))
    broken = [i for i in contract["items"] if not i["ok"]]
    assert broken[0]["name"] == item and broken[0]["note"] == note
    if change is not _swapped:  # swapped names also move the per-joint values the IO descriptors index by name
        assert len(broken) == 1
    first = contract_findings(contract, ["runner", "jit"])[0]
    assert first.stage == "contract" and f"states the {item} otherwise than the env" in first.cause


def test_a_history_the_export_was_not_made_for_is_named_with_the_sizes(tmp_path):
    env = env_cfg()
    env["observations"]["policy"]["history_length"] = 3  # the group's history replaces each term's
    contract = contract_of(write_run(tmp_path, env=env))
    broken = {i["name"]: i["note"] for i in contract["items"] if not i["ok"]}
    assert broken == {"observation history": "joint_pos_rel: 0 in the export, 3 in the env",
                      "observation size": "the export's graph takes 4, the policy group gives 12 "
                                          "(joint_pos_rel 2×3 + joint_vel_rel 2×3)"}


def test_the_env_yaml_resolves_regexes_and_preserve_order_as_isaac_lab_does(tmp_path):
    env = env_cfg()
    env["actions"]["joint_pos"].update(joint_names=["slide_y", "slide_x"], preserve_order=True)
    contract = contract_of(write_run(tmp_path, env=env))  # the IO descriptors keep the articulation's order
    order = contract["items"][0]
    assert (order["ok"], order["env"]) == (False, ["slide_y", "slide_x"])


def test_without_io_descriptors_the_export_is_checked_and_one_note_says_what_is_not(tmp_path):
    contract = contract_of(write_run(tmp_path, io_name=""))
    assert [i["name"] for i in contract["items"]] == ["observation size", "action size", "normalizer"]
    assert contract["notes"] == ["no IO descriptors in 2026-12-01_10-00-00 (Isaac Lab writes them when trained with "
                                 "--export_io_descriptors): params/env.yaml's joints, gains and terms are not "
                                 "checked"]


def test_the_export_scripts_file_name_is_found_too(tmp_path):
    contract = contract_of(write_run(tmp_path, io_name="isaac_slider_v0_IO_descriptors.yaml"))
    assert contract["source"].startswith("isaac_slider_v0_IO_descriptors.yaml (Isaac Lab's IO descriptors)")
    assert all(i["ok"] for i in contract["items"])


def _three_stiffnesses(io):
    io["articulations"]["robot"]["default_joint_stiffness"] = [40.0, 30.0, 20.0]


UNREADABLE = [
    # YAML that does not parse stops the run at once as a damaged file (kinds/integrity.py), so: YAML of another
    # shape, a layout of another Isaac Lab version, a list of the wrong length
    (lambda run: (run / "IO_descriptors.yaml").write_text("- actions\n- observations\n"),
     "IO_descriptors.yaml holds a list, not a mapping"),
    (lambda run: (run / "IO_descriptors.yaml").write_text("actions: 5\n"),
     "IO_descriptors.yaml or params/env.yaml is not laid out as Isaac Lab writes it (TypeError: 'int' object is "
     "not iterable)"),
    (lambda run: None,
     "the IO descriptors' articulations' default_joint_stiffness has 3 values for the 2 joints of the articulation: "
     "not checked, export the IO descriptors again"),
]


def _unreadable_run(out, write):
    checkpoint = with_io(out, _three_stiffnesses)
    write(checkpoint.parent)
    return checkpoint


@pytest.mark.parametrize("write, note", UNREADABLE)
def test_a_contract_file_that_cannot_be_read_is_one_note_and_the_export_is_still_checked(tmp_path, write, note):
    contract = contract_of(_unreadable_run(tmp_path, write))
    assert contract["notes"] == [note]
    assert [i["name"] for i in contract["items"]] == ["observation size", "action size", "normalizer"]


def test_a_contract_file_that_cannot_be_read_is_one_note_and_the_run_goes_on(tmp_path):
    # the note reaches the run's output the same way whatever it says (checked above for each): one run shows it
    write, note = UNREADABLE[0]
    checkpoint = _unreadable_run(tmp_path, write)
    out = tmp_path / "summary.json"
    proc = cli(checkpoint, "--headless", "--episodes", "4", "--json", out, "--log", tmp_path / "run.sqlite")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(out.read_text())["paths"]["jit"]["episodes"] == 4
    assert f"note: {note}" in proc.stdout


def test_the_headless_table_and_the_doctor_name_a_planted_stiffness(tmp_path):
    checkpoint = with_io(tmp_path, _stiffness_one)
    proc = cli(checkpoint, "--headless", "--episodes", "4", "--log", tmp_path / "run.sqlite")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "deployment contract: IO_descriptors.yaml (Isaac Lab's IO descriptors)" in proc.stdout
    assert "  ✗ joint stiffness: slide_y: 1 in the export, 30 in the env" in proc.stdout
    assert "  ✓ action scale" in proc.stdout
    proc = cli("diagnose", checkpoint, "--num-envs", "4", "--log", tmp_path / "diag.sqlite")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[1].startswith("1. the export's deployment contract states the joint stiffness "
                                                  "otherwise than the env")
    assert "   fix: export the IO descriptors again from the env the policy trained in" in proc.stdout


def test_io_descriptors_of_the_fixture_keep_isaac_labs_layout():
    io = io_descriptors()  # the keys and fields Isaac Lab's export writes (its Anymal-D example's)
    assert sorted(io) == ["actions", "articulations", "observations", "scene"]
    assert sorted(io["actions"][0]) == ["action_type", "clip", "dtype", "extras", "full_path", "joint_names",
                                        "mdp_type", "name", "offset", "scale", "shape"]
    assert sorted(io["observations"]["policy"][0]["overloads"]) == ["clip", "flatten_history_dim", "history_length",
                                                                    "scale"]
