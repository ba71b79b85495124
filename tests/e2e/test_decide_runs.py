"""`--until-decided` and the gate `--vs B --fail-if-worse D` on real CartPole runs, as a user runs them: bad
input, a run that ends early with the gate's exit code, and the gate undecided at the budget."""

from __future__ import annotations

import json

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.cli_jobs import UNTIL_DECIDED, result_of
from tests.support.common import CARTPOLE, cli


def test_gate_without_a_baseline_or_with_a_negative_margin_is_bad_input(capsys):
    assert_one_line_error(in_process(capsys, CARTPOLE, "--headless", "--fail-if-worse", "5"), "--vs")
    assert_one_line_error(in_process(capsys, CARTPOLE, "--headless", "--vs", CARTPOLE, "--fail-if-worse", "-1"),
                          ">= 0")
    assert_one_line_error(in_process(capsys, CARTPOLE, "--headless", "--vs", CARTPOLE,
                                     "--fail-if-worse-success", "150"), "percentage points")



def test_until_decided_ends_a_real_run_early_and_the_gate_says_worse(prefetcher, tmp_path):
    """The candidate samples (explore on), the baseline is greedy: it is worse by far more than 20;
    the run stops at the gate's answer, long before its budget, and exits 3."""
    # --vs the demo --explore connectors=on --episodes 400 --num-envs 8 --until-decided --fail-if-worse 20
    # --json s.json --log run.sqlite (a background job)
    proc, tmp_path = result_of(prefetcher, UNTIL_DECIDED, tmp_path / "run")
    assert proc.returncode == 3, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "s.json").read_text())
    decision = summary["decision"]
    assert decision["rule"] == "gate" and decision["answer"] == "worse" and decision["stopped_early"]
    assert 2 <= decision["pairs"] < 200
    assert all(p["episodes"] < 400 for p in summary["paths"].values())
    assert f"gate: worse after {decision['pairs']} pairs (stopped early)" in proc.stdout
    attached = cli("attach", tmp_path / "run.sqlite", "--headless", "--json", tmp_path / "a.json", cwd=tmp_path)
    assert json.loads((tmp_path / "a.json").read_text())["decision"] == decision and attached.returncode == 0



def test_gate_undecided_at_the_budget_exits_5(tmp_path, capsys):
    """In this process (the CLI's `main`): the gate's exit code at the budget."""
    proc = in_process(capsys, CARTPOLE, "--headless", "--vs", CARTPOLE, "--episodes", "3", "--num-envs", "3",
                      "--fail-if-worse", "1", "--json", tmp_path / "s.json", "--log", tmp_path / "run.sqlite")
    assert proc.returncode == 5, proc.stderr[-3000:]
    decision = json.loads((tmp_path / "s.json").read_text())["decision"]
    assert decision["answer"] == "undecided" and decision["pairs"] == 3 and not decision["stopped_early"]
    assert "gate: undecided after 3 pairs (the budget)" in proc.stdout
