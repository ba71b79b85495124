"""The doctor on checkpoints of RLlib's own example configs (tests/support/example_checkpoints.py), with the
loop users copy from RLlib's policy-inference example (tests/support/doctor_loops.py): what differs without
acting is no finding, and paths that agree are said to be IDENTICAL."""

from __future__ import annotations

import json

import pytest

from tests.support.common import SUPPORT
from tests.support.engines import plan_for
from tests.support.jobs import EXAMPLES
from tui_eval.cli import main
from tui_eval.doctor.diagnosis import diagnose_plan

EXAMPLE_LOOP = ("--path", f"example={SUPPORT / 'doctor_loops.py'}:policy_inference_example")


@pytest.fixture(scope="module")
def lstm_inference(prefetcher, tmp_path_factory):
    proc, out = prefetcher.wait(EXAMPLES, tmp_path_factory.mktemp("examples"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / "lstm_inference"


def test_the_policy_inference_examples_value_head_is_no_finding(lstm_inference, tmp_path):
    """RLlib's evaluate holds a value head that is not the checkpoint's (its EnvRunner's module was synced
    before the last update); no action depends on it. With explore on (evaluate's default) the only finding is
    evaluate's sampling, proven; the value head is listed apart."""
    plan = plan_for(lstm_inference, "--episodes", "3", "--paths", "evaluate,connectors,example", *EXAMPLE_LOOP,
                    log=tmp_path / "run.sqlite")
    d = diagnose_plan(plan)
    assert d.findings and {f.topic for f in d.findings} == {"explore"}, d.text()
    assert all("proof: asked 4 times" in f.evidence for f in d.findings)
    assert "weights" not in d.differ
    assert set(d.idle) <= {"evaluate"} and all(w.startswith("vf.") for w in d.idle.get("evaluate", []))


def test_the_policy_inference_example_with_explore_off_is_identical_in_plain_words(lstm_inference, tmp_path, capsys):
    plan = plan_for(lstm_inference, "--episodes", "3", "--paths", "evaluate,connectors,example", *EXAMPLE_LOOP,
                    "--explore", "evaluate=off", log=tmp_path / "run.sqlite")
    d = diagnose_plan(plan)
    assert d.findings == [] and d.differ == {}, d.text()
    assert "differing facts" not in d.text()
    out = tmp_path / "summary.json"
    code = main([str(lstm_inference), "--headless", "--episodes", "6", "--paths", "evaluate,example", *EXAMPLE_LOOP,
                 "--explore", "evaluate=off", "--json", str(out), "--log", str(tmp_path / "run2.sqlite")])
    assert code == 0
    verdict = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith("verdict: IDENTICAL on 6/6 seeds — evaluate vs example, both deterministic"), verdict
    comparison = json.loads(out.read_text())["comparison"]
    assert comparison["per_seed"] == "identical" and comparison["verdict"] == "undecided"
