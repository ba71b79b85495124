"""How a diagnosis reads when the paths agree (a unit test of its text; the doctor's integration tests run the
real paths)."""

from __future__ import annotations

from tui_eval.doctor.diagnosis import Diagnosis
from tui_eval.doctor.findings import Finding


def test_differences_that_changed_no_action_are_not_called_differing_facts():
    agree = Diagnosis(findings=[], same=[{"fact": "explore", "value": False}],
                      differ={"clip_actions": {"a": True, "b": False}}, replay={}, paths=["a", "b"], seed=None,
                      batch={"a": {1: 1.0}, "b": {1: 1.0}}, idle={"b": ["vf.net.mlp.0.weight"]})
    text = agree.text()
    assert "no findings: the paths do not diverge" in text
    assert "differing facts" not in text
    assert "differs, changed no action on the seeds run: clip_actions" in text
    assert "differs, does not act (no action depends on these weights: a value head, a critic): b: " \
           "vf.net.mlp.0.weight" in text
    assert agree.to_json()["differs_does_not_act"] == {"weights": {"b": ["vf.net.mlp.0.weight"]}, "settings": {}}

    finding = Finding("cause", "evidence", "fix", ["a", "b"], "action", 1, 0, 50, "explore")
    diverged = Diagnosis(findings=[finding], same=[], differ={"explore": {"a": True, "b": False}}, replay={},
                         paths=["a", "b"], seed=1)
    assert "differing facts: explore" in diverged.text()


def test_a_setting_whose_swap_changed_no_action_is_listed_with_its_proof_not_as_a_difference():
    proof = "with `a`'s clip_actions put in, `b` sends the same actions on steps 0-99 of seed 1"
    d = Diagnosis(findings=[], same=[], differ={}, replay={}, paths=["a", "b"], seed=1,
                  inert={"clip_actions": {"values": {"a": True, "b": False}, "proof": proof},
                         "connector state": {"values": {"a": {"x": list(range(30))}, "b": {}}, "proof": proof}})
    text = d.text()
    assert f"differs, does not act: clip_actions (a: true; b: false): {proof}" in text
    assert "differs, does not act: connector state (values in --json)" in text
    assert "differing facts" not in text and "changed no action on the seeds run" not in text
    assert d.to_json()["differs_does_not_act"]["settings"]["clip_actions"]["values"] == {"a": True, "b": False}
