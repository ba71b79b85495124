"""A float is not a difference: two paths are judged on the same observations, to a tolerance, and the noise floor is
measured, so `DIFFER (exact)` is said only for a real difference.

On the bundled Pendulum checkpoint (continuous actions, 200-step episodes whose dynamics amplify any rounding), its
`connectors` path against users' loops around the same pipelines (tests/support/precision_paths.py): the module in
float64 (the same policy, episodes that part), one weight moved by 1e-3 (another policy), and the same float32 loop
on a Pendulum whose state gets pushes from a generator nobody seeds (tests/support/noisy_envs.py).
"""

from __future__ import annotations

import json
import os

from tests.support.bad_input import in_process
from tests.support.common import ROOT
from tests.support.engines import checks_watched, finish, plan_for, run_to_end
from tui_eval.isolation.check import CHECK_NICENESS, check_niceness
from tui_eval.session import start_engine
from tui_eval.views.format import verdict_line

PENDULUM = ROOT / "assets" / "ppo_pendulum"
LOOPS = ROOT / "tests" / "support" / "precision_paths.py"
NOISY = ("--env", "tests.support.noisy_envs:NoisyPendulum-v0")


def against(loop: str, *extra: str) -> tuple[str, ...]:
    return ("--path", f"mine={LOOPS}:{loop}", "--paths", "connectors,mine", "--episodes", "20", *extra)


def test_a_float64_copy_of_the_policy_reads_same_policy_never_differ_exact(capsys, tmp_path):
    out = tmp_path / "summary.json"
    # the CLI's entry in this process: what it prints, without a second interpreter's imports
    proc = in_process(capsys, PENDULUM, *against("float64_pipelines"), "--headless", "--json", out, "--log",
                      tmp_path / "run.sqlite")
    assert proc.returncode == 0, proc.stderr[-3000:]
    comparison = json.loads(out.read_text())["comparison"]
    assert comparison["differing"] > 0  # the episodes did part: the rounding was amplified
    assert comparison["same_policy"] is True and comparison["exact"] is False and comparison["proof"] == "refuted"
    agreement = comparison["agreement"]
    assert agreement["within"] is True and 0 < agreement["max_abs"] <= 1e-5 and agreement["steps"] == 400
    assert agreement["tolerance"]["atol"] == 1e-5 and agreement["dtypes"] == {"connectors": "float32",
                                                                               "mine": "float64"}
    floor = comparison["noise_floor"]  # on the CPU the path repeats itself: a floor of 0, said
    assert floor["path"] == "connectors" and floor["seeds"] >= 2 and floor["repeated"] == floor["seeds"]
    assert floor["diff_spread"] == 0.0
    verdict = next(line for line in proc.stdout.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith("verdict: SAME POLICY (max |Δaction| ") and "(statistical)" in verdict
    assert "DIFFER" not in proc.stdout
    assert "the episodes part because the dynamics amplify rounding" in proc.stdout
    assert "noise floor 0: connectors against itself" in proc.stdout


def test_a_tolerance_below_the_rounding_makes_the_float64_copy_differ_exact(tmp_path):
    engine, _ = run_to_end(PENDULUM, *against("float64_pipelines", "--action-tolerance", "1e-9"),
                           log=tmp_path / "run.sqlite", own_processes=True)
    summary = engine.stats.comparison.summary()
    assert summary.exact and summary.verdict == "differ" and summary.same_policy is False
    assert summary.agreement["tolerance"] == {"atol": 1e-9, "rtol": 1e-9, "source": "--action-tolerance"}


def test_one_weight_moved_by_a_thousandth_is_differ_exact_with_its_step_and_both_actions(tmp_path):
    engine = start_engine(plan_for(PENDULUM, *against("moved_weight_pipelines"), log=tmp_path / "run.sqlite",
                                   own_processes=True))
    with checks_watched(engine) as checks:
        finish(engine)
    # the check yields the CPU to the run's paths; a run whose answer waits on it (--until-decided) keeps its own
    assert max(checks.niceness.values()) == CHECK_NICENESS != os.getpriority(os.PRIO_PROCESS, 0)
    assert check_niceness(engine._prove.spec) == CHECK_NICENESS
    assert check_niceness(plan_for(PENDULUM, "--until-decided", log=tmp_path / "u.sqlite").spec) == 0
    summary = engine.stats.comparison.summary()
    assert summary.exact and summary.verdict == "differ" and summary.proof == "proven"
    assert summary.same_policy is False
    worst = summary.agreement["worst"]
    assert worst["seed"] == summary.first_difference.seed and 0 <= worst["step"] < 200
    assert len(worst["observation"]) == 3  # Pendulum's cos, sin, angular velocity
    ours, theirs = worst["actions"]["connectors"][0], worst["actions"]["mine"][0]
    assert abs(ours - theirs) == summary.agreement["max_abs"] or abs(abs(ours - theirs)
                                                                      - summary.agreement["max_abs"]) < 1e-6
    assert summary.agreement["max_abs"] > 1e-5
    line = verdict_line(summary)
    assert line.startswith("verdict: DIFFER (exact)")
    assert f"at step {worst['step']}" in line and "each path alone gave its own return again" in line


def test_an_env_that_does_not_repeat_itself_has_a_noise_floor_and_a_statistical_verdict(tmp_path):
    engine, _ = run_to_end(PENDULUM, *NOISY, *against("float32_pipelines", "--equivalence-margin", "floor"),
                           log=tmp_path / "run.sqlite", own_processes=True)
    summary = engine.stats.comparison.summary()
    assert not summary.exact and summary.verdict != "differ"
    assert summary.same_policy is True and summary.agreement["max_abs"] == 0.0  # one float32 policy, fed alike
    floor = summary.noise_floor
    assert floor["seeds"] >= 2 and floor["repeated"] < floor["seeds"] and floor["diff_spread"] > 0
    # --equivalence-margin floor: the margin is the floor's spread, fixed once measured
    assert summary.margin == floor["diff_spread"] and "noise floor" in summary.margin_source
    assert "does not repeat itself from its seed" in engine.proof.line


def test_the_doctor_explains_a_same_policy_divergence_as_amplified_rounding(tmp_path):
    from tests.support.engines import plan_for
    from tui_eval.doctor.diagnosis import diagnose_plan
    from tui_eval.doctor.findings import UNEXPLAINED

    plan = plan_for(PENDULUM, *against("float64_pipelines"), log=tmp_path / "run.sqlite")
    diagnosis = diagnose_plan(plan, seed=1000000012)  # a seed whose episodes part (the run above shows it)
    first = diagnosis.findings[0]
    assert first.topic == "rounding" and first.paths == ["connectors", "mine"]
    assert "part because the dynamics amplify rounding" in first.cause
    assert f"the actions sent part beyond the tolerance at step {first.step}" in first.evidence
    assert "a thousandfold by step" in first.evidence and "nothing to fix" in first.fix
    assert not any(UNEXPLAINED in f.cause for f in diagnosis.findings)
