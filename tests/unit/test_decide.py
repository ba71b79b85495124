"""`--until-decided` and the CI gate `--vs B --fail-if-worse D`: the gate's error rates by simulation
(the comparison's own intervals, looked at after every pair, stopped at the first answer), the gate
on a real `Comparison`. Bad input and real CartPole runs that end early: tests/e2e/test_decide_runs.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tui_eval.engine.decide import gate_answer, gate_exit_code
from tui_eval.records import EpisodeRecord
from tui_eval.stats import Comparison, tail_guarded_cs
from tui_eval.stats.combine import betting_and_asymptotic_cs
from tui_eval.views.format import decision_line

RUNS, LOOKS = 300, 400
LIMIT = 0.05 + 3 * math.sqrt(0.05 * 0.95 / RUNS)
SPAN = 3254.7 * 2  # Pendulum-v1's return bounds [-3254.7, 0]: a difference lies in [-6509.4, 6509.4]
D = 50.0


def pendulum_differences(rng, gap, shape):
    """candidate - baseline per seed: N(-1100, 220) returns correlated 0.8 (sd of the difference 139)."""
    return rng.normal(gap, 220.0 * math.sqrt(2 * 0.2), shape)


def first_answers(lo, hi, margin):
    """The gate's first answer per run (the run stops there): 'not worse', 'worse' or 'undecided'."""
    never = lo.shape[1]
    with np.errstate(invalid="ignore"):
        ok, bad = lo > -margin, hi < -margin
    t_ok = np.where(ok.any(1), ok.argmax(1), never)
    t_bad = np.where(bad.any(1), bad.argmax(1), never)
    return np.where(t_ok < t_bad, "not worse", np.where(t_bad < t_ok, "worse", "undecided"))


def comparison_cs(d, bounded):
    """The interval the comparison shows for the paired return difference (alpha/2: the fixed split)."""
    if bounded:
        return betting_and_asymptotic_cs(d, -SPAN, SPAN, 0.025)
    return tail_guarded_cs(d, 0.025)


@pytest.mark.parametrize("bounded", [False, True], ids=["no-bounds", "bounds"])
def test_gate_error_rates_when_worse_by_exactly_d_and_when_equal(bounded):
    rng = np.random.default_rng(31)
    at_margin = first_answers(*comparison_cs(pendulum_differences(rng, -D, (RUNS, LOOKS)), bounded), D)
    equal = first_answers(*comparison_cs(pendulum_differences(rng, 0.0, (RUNS, LOOKS)), bounded), D)
    false_pass = float((at_margin == "not worse").mean())
    false_fail = float((equal == "worse").mean())
    print(f"\nbounded={bounded}: worse by D, says 'not worse' {false_pass:.1%}; equal, says 'worse' {false_fail:.1%}; "
          f"equal, says 'not worse' {float((equal == 'not worse').mean()):.1%}")
    assert false_pass <= LIMIT and false_fail <= LIMIT
    assert (equal == "not worse").mean() > 0.8  # and it answers: equal paths pass within 400 pairs


def test_gate_reads_the_comparison_that_runs_in_either_order():
    rng = np.random.default_rng(32)
    d = pendulum_differences(rng, -20.0, (3, 120))
    base = rng.normal(-1100.0, 220.0, d.shape)
    lo, hi = comparison_cs(d, bounded=False)
    # the comparison shows the running intersection (stats/sticky.py): the first answer is the same
    lo, hi = np.fmax.accumulate(lo, axis=1), np.fmin.accumulate(hi, axis=1)
    assert not (lo > hi).any()
    for run in range(d.shape[0]):
        forward, backward = Comparison("connectors", "vs"), Comparison("vs", "connectors")
        for i in range(d.shape[1]):
            for cmp in (forward, backward):
                cmp.add(EpisodeRecord("connectors", i, float(base[run, i] + d[run, i]), 200))
                cmp.add(EpisodeRecord("vs", i, float(base[run, i]), 200))
            want = "not worse" if lo[run, i] > -D else "worse" if hi[run, i] < -D else "undecided"
            assert gate_answer(forward.summary().to_json(), D, None) == want, (run, i)
            assert gate_answer(backward.summary().to_json(), D, None) == want, (run, i)


def test_gate_on_success_rate_in_points_and_exit_codes():
    cmp = {"a": "connectors", "b": "vs", "diff_cs95": [-1.0, 1.0], "success_diff_cs95": [-0.02, 0.01]}
    assert gate_answer(cmp, None, 5.0) == "not worse"  # -2 points > -5 points
    assert gate_answer(cmp, None, 1.0) == "undecided"
    assert gate_answer({**cmp, "success_diff_cs95": [-0.2, -0.1]}, None, 5.0) == "worse"
    assert gate_answer(cmp, 2.0, 5.0) == "not worse" and gate_answer(cmp, 0.5, 5.0) == "undecided"
    assert gate_answer({**cmp, "success_diff_cs95": None}, 2.0, 5.0) == "undecided"  # no success signal
    for answer, code in (("not worse", 0), ("worse", 3), ("undecided", 5)):
        summary = {"decision": {"rule": "gate", "answer": answer, "pairs": 7, "stopped_early": answer != "undecided"}}
        assert gate_exit_code(summary) == code
        assert "7 pairs" in decision_line(summary)
    assert gate_exit_code({"decision": {"rule": "verdict", "answer": "differ"}}) is None
    assert gate_exit_code({}) is None


def test_a_void_comparison_decides_nothing_even_when_an_answer_was_noted_before_the_failure():
    """A path given up voids the comparison: the summary's decision says so, never the answer noted from the
    failed path's episodes (the table's decision line says none)."""
    from tui_eval.engine.decide import decision_summary
    from tui_eval.engine.void import voided

    comparison = {"a": "connectors", "b": "vs", "paired": 12, "verdict": "differ", "diff_cs95": [-40.0, -30.0]}
    meta = {"spec": {"until_decided": True, "episodes": 100},
            "decision": {"rule": "verdict", "answer": "differ", "pairs": 12, "stopped_early": True}}
    assert decision_summary(meta, comparison)["answer"] == "differ"  # not void: the noted answer stands
    void = decision_summary(meta, voided(comparison, "path vs failed and was given up (boom)"))
    assert void["answer"] == "void" and not void["stopped_early"]
    assert decision_line({"decision": void}) == "verdict: none (a path was given up: the comparison is void)"
