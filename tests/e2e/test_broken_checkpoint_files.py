"""Every file of the bundled checkpoints in turn truncated, emptied, overwritten with garbage or removed: one line
naming it and what to do, before the run's header and with no log left; or, for a file the run does not need, a
run that plans and builds its paths as from the intact checkpoint (docs/contract.md lists those files)."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.common import CARTPOLE, ROOT

RSL_DEMO = ROOT / "tui_eval" / "demo_checkpoints" / "rsl_pointgoal"
SB3_DEMO = ROOT / "tui_eval" / "integrations" / "sb3" / "demo" / "logs" / "sac" / "Pendulum-v1_1"
#: (the checkpoint folder, what is passed on the command line within it)
CHECKPOINTS = {"rllib": (CARTPOLE, "."), "rsl_rl": (RSL_DEMO, "model_39.pt"), "sb3": (SB3_DEMO, ".")}
#: where a copy goes inside the test's folder (an rl-zoo3 run sits in logs/<algo>/, which names its algorithm)
COPY_AS = {"sb3": "checkpoint/logs/sac/Pendulum-v1_1"}
#: files a run does not read: removing one leaves the run as it was (rsl_rl's jit path scripts the model itself;
#: an rl-zoo3 run's args.yml gives its seed and env kwargs, and its folder names the algorithm, as enjoy.py reads)
NOT_NEEDED = {("rsl_rl", "exported/policy.pt"), ("sb3", "Pendulum-v1/args.yml")}
#: a run's agent cfg without its env (gone, or cut before its env's line): the kind cannot tell the env and asks
#: for it, the file being optional (the cfg is then inferred from the weights)
ASKS_FOR_THE_ENV = {("rsl_rl", "params/agent.yaml", "removed"), ("rsl_rl", "params/agent.yaml", "truncated")}
DAMAGES = ("truncated", "emptied", "garbage", "removed")
WHAT_TO_DO = ("copy", "save it again", "pass ", "use a complete")


def damage(file: Path, how: str) -> None:
    data = file.read_bytes()
    if how == "truncated":
        file.write_bytes(data[: len(data) // 2])
    elif how == "emptied":
        file.write_bytes(b"")
    elif how == "garbage":  # the same length, other bytes (a disk or a copy gone wrong)
        file.write_bytes(random.Random(len(data)).randbytes(max(len(data), 64)))
    else:
        file.unlink()


def cases():
    for kind, (folder, _) in CHECKPOINTS.items():
        for file in sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()):
            for how in DAMAGES:
                yield pytest.param(kind, file, how, id=f"{kind}-{file}-{how}")


@pytest.mark.parametrize("kind, file, how", list(cases()))
def test_a_broken_file_is_one_line_naming_it(kind, file, how, run_dir, capsys):
    folder, passed = CHECKPOINTS[kind]
    if kind == "sb3":
        pytest.importorskip("stable_baselines3", reason="the sb3 extra is not installed: pip install -e '.[sb3]'")
    copy = run_dir / COPY_AS.get(kind, "checkpoint")
    shutil.copytree(folder, copy)
    damage(copy / file, how)
    if (kind, file) in NOT_NEEDED and how == "removed":
        assert_runs_as_intact(copy / passed, kind)
        return
    result = in_process(capsys, copy / passed, "--headless", "--episodes", "1", "--log", run_dir / "run.sqlite")
    assert_one_line_error(result)
    line = result.stderr.strip().splitlines()[-1]
    if (kind, file, how) in ASKS_FOR_THE_ENV:
        assert "pass --env ID" in line, line
        return
    named = Path(file).name if how != "removed" or Path(file).name == Path(passed).name else Path(file).parent.name
    assert named in line or Path(file).name in line, line
    assert any(advice in line for advice in WHAT_TO_DO), line
    assert "seeds:" not in result.stderr  # said before the run's header
    assert sorted(p.name for p in run_dir.iterdir()) == ["checkpoint"]  # no log, no lock


def assert_runs_as_intact(checkpoint: Path, kind: str) -> None:
    """The run plans, and builds each of its paths, from the checkpoint with the file gone."""
    from tests.support.bad_input import in_process as _  # noqa: F401  (the CLI's process setup is imported)
    from tui_eval.cli import build_parser, spec_from_args
    from tui_eval.session import end_path_processes_ahead, plan_run

    spec = spec_from_args(build_parser().parse_args([str(checkpoint), "--headless", "--episodes", "1",
                                                     "--in-process"]))
    plan = plan_run(spec)
    try:
        for name in plan.paths:
            plan.kind.build_path(name, plan.explore[name]).close()
    finally:
        end_path_processes_ahead()
    assert kind == plan.kind.name


def test_every_file_is_covered():
    """A file added to a bundled checkpoint is broken in turn here too (not silently skipped)."""
    ids = {(kind, file) for kind, file, _ in (c.values for c in cases())}
    for kind, (folder, _) in CHECKPOINTS.items():
        assert {f for k, f in ids if k == kind} == {p.relative_to(folder).as_posix() for p in folder.rglob("*")
                                                   if p.is_file()}
    assert os.path.isdir(RSL_DEMO)


#: the files of an mjlab run (trained by mjlab's own train, tests/support/mjlab_run.py) by role, and what a damage
#: to each gives: None, one line naming the file; else the checkpoint the run then plans with and its paths
MJLAB_FILES = {"newest model": "model_2.pt", "older model": "model_0.pt", "export": "{run}.onnx",
               "env params": "params/env.yaml", "agent params": "params/agent.yaml"}
MJLAB_PLANS = {("newest model", "removed"): ("model_0.pt", ["runner", "onnx"]),  # the newest left is played
               ("export", "removed"): ("model_2.pt", ["runner", "jit"]),  # no export: the runner's own TorchScript
               ("env params", "truncated"): ("model_2.pt", ["runner", "onnx"]),  # --env names the task
               ("agent params", "truncated"): ("model_2.pt", ["runner", "onnx"]),  # the task's registered cfg
               ("agent params", "removed"): ("model_2.pt", ["runner", "onnx"]),
               **{("older model", how): ("model_2.pt", ["runner", "onnx"]) for how in DAMAGES}}


@pytest.mark.parametrize("role", list(MJLAB_FILES))
@pytest.mark.parametrize("how", DAMAGES)
def test_a_broken_file_of_an_mjlab_run(prefetcher, tmp_path_factory, run_dir, capsys, monkeypatch, role, how):
    pytest.importorskip("mjlab", reason="the mjlab extra is not installed: pip install -e '.[mjlab]'")
    from tests.support.jobs import MJLAB_RUN

    proc, _ = prefetcher.wait(MJLAB_RUN, tmp_path_factory.mktemp("mjlab"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.strip().splitlines()[-1])
    copy = run_dir / "checkpoint" / run.name
    shutil.copytree(run, copy)
    file = MJLAB_FILES[role].format(run=run.name)
    damage(copy / file, how)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    argv = [str(copy), "--env", "Mjlab-Cartpole-Balance", "--headless", "--episodes", "1"]
    if (role, how) in MJLAB_PLANS:
        from tui_eval.cli import build_parser, spec_from_args
        from tui_eval.session import end_path_processes_ahead, plan_run

        played, paths = MJLAB_PLANS[(role, how)]
        try:
            plan = plan_run(spec_from_args(build_parser().parse_args([*argv, "--in-process", "--log",
                                                                      str(run_dir / "plan.sqlite")])))
        finally:
            end_path_processes_ahead()
        assert (plan.kind.checkpoint.name, plan.paths) == (played, paths)
        return
    result = in_process(capsys, *argv, "--log", run_dir / "run.sqlite")
    assert_one_line_error(result)
    line = result.stderr.strip().splitlines()[-1]
    assert Path(file).name in line and any(advice in line for advice in WHAT_TO_DO), line
    assert "seeds:" not in result.stderr and sorted(p.name for p in run_dir.iterdir()) == ["checkpoint"]
