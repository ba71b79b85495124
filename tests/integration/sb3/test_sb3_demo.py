"""`tui-eval demo sb3`: the rl-zoo3 run folder the sb3 kind ships in its package (KindPlugin.demos), listed by
`tui-eval demo --help`, played against SB3's ONNX recipe, whose export leaves VecNormalize and the unscaling out:
the paths differ and the doctor names both omissions."""

from __future__ import annotations

from tests.support.bad_input import in_process
from tests.support.engines import plan_for
from tui_eval.demos import demo_checkpoint
from tui_eval.doctor.diagnosis import diagnose_plan


def test_demo_help_lists_the_sb3_demo(capsys):
    got = in_process(capsys, "demo", "--help")
    assert got.returncode == 0
    line = next(line for line in got.stdout.splitlines() if line.strip().startswith("sb3 "))
    assert "Stable-Baselines3 SAC on Pendulum-v1 behind VecNormalize" in line, line


def test_the_sb3_demo_differs_from_the_recipes_export(tmp_path, capsys):
    got = in_process(capsys, "demo", "sb3", "--headless", "--in-process", "--episodes", "4", "--num-envs", "2",
                     "--log", tmp_path / "r.sqlite")
    assert got.returncode == 0, got.stderr[-2000:]
    header = got.stderr + got.stdout
    assert "playing Pendulum-v1.zip, the run's final model" in header
    assert "written by tui-eval with SB3's documented ONNX export" in header
    verdict = next(line for line in got.stdout.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith("verdict: DIFFER"), verdict


def test_the_doctor_names_both_omissions_on_the_sb3_demo(tmp_path):
    plan = plan_for(demo_checkpoint("sb3"), "--episodes", "2", "--num-envs", "2", log=tmp_path / "r.sqlite")
    top = diagnose_plan(plan, seed=1_000_000_000).findings[0]
    assert top.cause.startswith("`onnx` lacks the observation normalizer and sends the policy's squashed action"), \
        top.cause
    assert "neither change alone makes them agree" in top.evidence, top.evidence
