"""A checkpoint kind defined in the tests alone (tests/support/toy_kind: a tiny library of its own) registers with
the one registry and runs through the engine, headless, `--json`, `--help` and the doctor's replay, with no
change outside its package."""

from __future__ import annotations

import json

import pytest

from tests.support.engines import plan_for
from tests.support.toy_kind import save
from tui_eval.cli import main
from tui_eval.doctor.diagnosis import diagnose_plan

BALANCING = [[0, 0, -1, -1], [0, 0, 1, 1]]  # push toward where the pole falls: CartPole held for a while


@pytest.fixture
def toy(tmp_path, monkeypatch):
    monkeypatch.setenv("TUI_EVAL_KINDS", "tests.support.toy_kind:PLUGIN")
    checkpoint = tmp_path / "cart.toy.json"
    save(checkpoint, "CartPole-v1", BALANCING)
    return checkpoint


def test_a_kind_of_the_tests_runs_headless_with_its_own_paths_and_json(toy, tmp_path, capsys):
    out = tmp_path / "summary.json"
    log = tmp_path / "r.sqlite"
    assert main([str(toy), "--headless", "--episodes", "6", "--json", str(out), "--log", str(log)]) == 0
    data = json.loads(out.read_text())
    assert data["kind"] == "toy" and list(data["paths"]) == ["float64", "float32"]
    assert all(p["episodes"] == 6 for p in data["paths"].values()) and "numpy" in data["versions"]
    assert data["comparison"]["per_seed"] == "identical"
    assert "verdict: IDENTICAL on 6/6 seeds — float64 vs float32" in capsys.readouterr().out


def test_a_kind_of_the_tests_is_listed_by_help_and_named_in_bad_input(toy, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "toy        a toy policy file (*.toy.json)" in capsys.readouterr().out
    assert main([str(tmp_path / "missing.toy.json"), "--headless"]) == 2
    assert "a toy policy file (*.toy.json)" in capsys.readouterr().err


def test_a_kind_of_the_tests_declares_its_own_option_which_no_other_kind_takes(toy, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--toy-flip" in capsys.readouterr().out
    out = tmp_path / "summary.json"
    argv = [str(toy), "--headless", "--episodes", "6", "--toy-flip", "--json", str(out), "--log", str(tmp_path / "r")]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    paths = data["paths"]
    assert data["comparison"]["verdict"] == "differ" and paths["float64"]["mean"] > paths["float32"]["mean"]
    from tui_eval.demos import demo_checkpoint

    capsys.readouterr()
    assert main([str(demo_checkpoint("rsl_rl")), "--headless", "--toy-flip"]) == 2
    err = capsys.readouterr().err
    assert err == "tui-eval: error: --toy-flip is an option of toy checkpoints, and this checkpoint is rsl_rl's; " \
                  "drop --toy-flip\n"


def test_the_doctor_replays_a_kind_of_the_tests_through_its_paths_own_replay(toy, tmp_path):
    other = tmp_path / "other.toy.json"
    save(other, "CartPole-v1", [[0, 0, 1, 1], [0, 0, -1, -1]])
    d = diagnose_plan(plan_for(toy, "--episodes", "2", "--vs", str(other), log=tmp_path / "run.sqlite"))
    assert d.paths == ["float32", "vs"]
    assert set(d.replay["paths"]["vs"]["stages"]) == {"obs", "module_out", "action", "action_for_env"}
    pair = d.replay["pairs"][0]
    assert pair["step"] == 0 and pair["stage"] == "module_out"  # same observation, other weights
    assert d.findings and d.findings[0].step == 0
