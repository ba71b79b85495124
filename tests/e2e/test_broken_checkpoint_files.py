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
#: (the checkpoint folder, what is passed on the command line within it)
CHECKPOINTS = {"rllib": (CARTPOLE, "."), "rsl_rl": (RSL_DEMO, "model_39.pt")}
#: files a run does not read: removing one leaves the run as it was (rsl_rl's jit path scripts the model itself)
NOT_NEEDED = {("rsl_rl", "exported/policy.pt")}
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
    copy = run_dir / "checkpoint"
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
