"""The user's code misbehaving at import (`--import`) or in a factory (`--vecenv`, `--path`): it raises, exits,
prints, hangs, changes the working directory. Each is one line and exit 2, or a run that is unaffected."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.common import CARTPOLE, ROOT
from tests.support.run_start import RunStarts, stop_runs_at_start

RSL_DEMO = ROOT / "tui_eval" / "demo_checkpoints" / "rsl_pointgoal" / "model_39.pt"


def module(folder, name: str, source: str):
    path = folder / f"{name}.py"
    path.write_text(source)
    return path


def reaches_start(capsys, *args) -> str:
    """Run the CLI until its run would start playing; its stdout (the user's prints land there)."""
    from tui_eval.cli import main

    with pytest.raises(RunStarts):
        main([str(a) for a in args])
    return capsys.readouterr().out


@pytest.mark.parametrize("source, needles", [
    ("raise RuntimeError('config missing')\n", ["importing it raised RuntimeError: config missing"]),
    ("import sys\nsys.exit('usage: train.py --lr LR')\n", ["sys.exit('usage: train.py --lr LR')"]),
    ("import sys\nsys.exit()\n", ["sys.exit(None)"]),
])
def test_an_import_that_fails_is_one_line(run_dir, capsys, source, needles):
    script = module(run_dir, "user_script", source)
    result = in_process(capsys, CARTPOLE, "--headless", "--episodes", "1", "--import", script)
    assert_one_line_error(result, f"--import {script}", *needles)
    assert not (run_dir / "tui-eval-runs").exists() or not any((run_dir / "tui-eval-runs").iterdir())


def test_an_import_that_hangs_is_given_up_with_its_limit_said(run_dir, capsys, monkeypatch):
    monkeypatch.setenv("TUI_EVAL_IMPORT_TIMEOUT_S", "1")
    script = module(run_dir, "waits", "import time\ntime.sleep(600)\n")
    result = in_process(capsys, CARTPOLE, "--headless", "--episodes", "1", "--import", script)
    assert_one_line_error(result, "took more than 1s", "TUI_EVAL_IMPORT_TIMEOUT_S")


def test_an_import_that_changes_directory_leaves_the_run_where_it_was(run_dir, capsys, monkeypatch):
    """The checkpoint given relative to the run's folder is still found, and the run's folder is still its own."""
    stop_runs_at_start(monkeypatch)
    os.symlink(CARTPOLE, run_dir / "ckpt")
    script = module(run_dir, "wanders", "import os\nos.chdir('/')\n")
    reaches_start(capsys, "ckpt", "--headless", "--episodes", "1", "--import", script)
    assert os.getcwd() == str(run_dir)


def test_an_import_that_prints_does_not_change_the_run(run_dir, capsys, monkeypatch):
    stop_runs_at_start(monkeypatch)
    script = module(run_dir, "chatty", "print('registering my envs')\n")
    out = reaches_start(capsys, CARTPOLE, "--headless", "--episodes", "1", "--import", script)
    assert out == "registering my envs\n"


@pytest.mark.parametrize("name, body, needles", [
    ("raising_factory", "raise RuntimeError('no GPU for the sim')",
     ["--vecenv raising_factory:make raised RuntimeError: no GPU for the sim"]),
    ("exiting_factory", "import sys; sys.exit(4)", ["--vecenv exiting_factory:make raised SystemExit: 4"]),
])
def test_a_vecenv_factory_that_fails_is_one_line(run_dir, capsys, monkeypatch, name, body, needles):
    monkeypatch.syspath_prepend(str(run_dir))
    module(run_dir, name, f"def make(**kwargs):\n    {body}\n")
    result = in_process(capsys, RSL_DEMO, "--headless", "--episodes", "1", "--vecenv", f"{name}:make",
                        "--log", run_dir / "run.sqlite")
    assert_one_line_error(result, *needles)


def test_an_import_that_reseeds_the_global_generators_leaves_the_episodes_as_they_were(run_dir, capsys):
    """random, NumPy and torch reseeded at import (a training script's first lines): each episode's generators are
    seeded from its own seed at its reset, so the episodes are the same as without the import. The runner path
    explores: its actions are drawn from torch's global generator, which the import's seed would change. It runs
    alone, in the process that imported: the demo's other path (its deterministic export) draws nothing. The run
    without the import plays in this process, whose generators earlier tests left wherever they were."""
    from tests.support.common import cli

    reseeds = module(run_dir, "reseeds", "import random, numpy, torch\nrandom.seed(123)\nnumpy.random.seed(123)\n"
                                        "torch.manual_seed(123)\nrandom.random(); numpy.random.rand(7)\n")
    args = [RSL_DEMO, "--headless", "--episodes", "4", "--seeds", "0:4", "--explore", "runner=on", "--paths", "runner"]
    plain = in_process(capsys, *args, "--json", run_dir / "plain.json", "--log", run_dir / "plain.sqlite")
    assert plain.returncode == 0, plain.stderr[-2000:]
    imported = cli(*args, "--json", run_dir / "imported.json", "--log", run_dir / "imported.sqlite",
                   "--import", reseeds, cwd=run_dir)
    assert imported.returncode == 0, imported.stderr[-2000:]
    returns = [sorted((e["path"], e["seed"], e["return"]) for e in json.loads((run_dir / f"{name}.json").read_text())
                      ["episodes"]) for name in ("plain", "imported")]
    assert returns[0] == returns[1] and len(returns[0]) == 4


def test_a_path_factory_that_exits_is_one_line(run_dir, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(run_dir))
    module(run_dir, "exiting_path", "import sys\ndef make(checkpoint, explore, device):\n    sys.exit(5)\n")
    result = in_process(capsys, RSL_DEMO, "--headless", "--episodes", "1", "--path", "mine=exiting_path:make",
                        "--paths", "runner,mine", "--in-process", "--log", run_dir / "run.sqlite")
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])  # said when the path is loaded
    assert "Traceback" not in result.stderr
    assert "exiting_path:make" in result.stderr and "SystemExit: 5" in result.stderr, result.stderr[-2000:]
