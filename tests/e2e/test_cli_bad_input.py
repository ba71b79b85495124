"""Bad input: one line on stderr saying what is wrong and what to do, exit code 2, never a traceback."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.common import CARTPOLE, cli


@pytest.fixture(scope="module")
def broken_checkpoints(tmp_path_factory):
    """Copies of the real demo checkpoint, damaged in the ways users meet."""
    root = tmp_path_factory.mktemp("broken")
    made = {}

    truncated = root / "truncated"
    shutil.copytree(CARTPOLE, truncated)
    pickle_file = truncated / "class_and_ctor_args.pkl"
    pickle_file.write_bytes(pickle_file.read_bytes()[:100])
    made["truncated"] = truncated

    corrupt_marker = root / "corrupt_marker"
    shutil.copytree(CARTPOLE, corrupt_marker)
    (corrupt_marker / "rllib_checkpoint.json").write_text('{"checkpoint_vers')
    made["corrupt_marker"] = corrupt_marker

    # An old-API-stack checkpoint as ray writes it (version 1.x marker); built by editing the marker
    # because ray 2.60 no longer writes that layout.
    old = root / "old_api"
    shutil.copytree(CARTPOLE, old)
    marker = json.loads((old / "rllib_checkpoint.json").read_text())
    marker["checkpoint_version"] = "1.1"
    (old / "rllib_checkpoint.json").write_text(json.dumps(marker))
    made["old_api"] = old

    two_modules = root / "two_modules"
    shutil.copytree(CARTPOLE, two_modules)
    modules = two_modules / "learner_group" / "learner" / "rl_module"
    shutil.copytree(modules / "default_policy", modules / "opponent")
    made["two_modules"] = two_modules

    unrelated = root / "unrelated"
    unrelated.mkdir()
    (unrelated / "notes.txt").write_text("not a checkpoint")
    made["unrelated"] = unrelated

    empty = root / "empty"
    empty.mkdir()
    made["empty"] = empty
    return made


@pytest.mark.parametrize("name, needles", [
    ("truncated", ["truncated or corrupt"]),
    ("corrupt_marker", ["unreadable"]),
    ("old_api", ["old-API-stack"]),
    ("two_modules", ["default_policy, opponent", "--module"]),
    ("unrelated", ["not a checkpoint"]),
    ("empty", ["empty directory"]),
])
def test_broken_checkpoints(broken_checkpoints, name, needles, run_dir, capsys):
    assert_one_line_error(in_process(capsys, broken_checkpoints[name], "--headless", "--episodes", "2"), *needles)


@pytest.mark.parametrize("args, needles", [
    (["/no/such/checkpoint", "--headless"], ["does not exist"]),
    ([CARTPOLE, "--headless", "--env", "NoSuchEnv-v9"], ["registered neither with ray.tune.register_env nor with "
                                                         "Gymnasium", "--import", "--env"]),
    ([CARTPOLE, "--headless", "--import", "no/such/file.py"], ["--import no/such/file.py: no such file"]),
    ([CARTPOLE, "--headless", "--env", "no_such_module:Env-v0"], ["cannot import"]),
    ([CARTPOLE, "--headless", "--device", "cuda"], ["CUDA", "--device cpu"]),
    ([CARTPOLE, "--headless", "--device", "tpu"], ["--device expects"]),
    ([CARTPOLE, "--headless", "--seeds", "10"], ["START:STOP"]),
    ([CARTPOLE, "--headless", "--seeds", "20:10"], ["START < STOP"]),
    ([CARTPOLE, "--headless", "--seeds", "0:5", "--episodes", "9"], ["more than the 5 seeds"]),
    ([CARTPOLE, "--headless", "--explore", "evaluate"], ["PATH=on|off"]),
    ([CARTPOLE, "--headless", "--explore", "nosuch=on"], ["does not run"]),
    ([CARTPOLE, "--headless", "--paths", "evaluate,teleport"], ["unknown path 'teleport'", "evaluate, connectors"]),
    ([CARTPOLE, "--headless", "--episodes", "0"], ["must be positive"]),
    ([CARTPOLE, "--headless", "--env-config", "{nope"], ["not valid JSON"]),
    ([CARTPOLE, "--headless", "--module", "ghost"], ["not in the checkpoint", "default_policy"]),
    ([CARTPOLE, "--headless", "--episodes", "many"], ["invalid int value"]),
    (["demo", "somewhere"], ["unknown demo 'somewhere'", "rllib, pendulum, lunarlander, rsl_rl"]),
])
def test_bad_options(args, needles, run_dir, capsys):
    assert_one_line_error(in_process(capsys, *args), *needles)


@pytest.mark.parametrize("args, needles", [
    (["/no/such/checkpoint", "--headless"], ["does not exist"]),
    ([CARTPOLE, "--headless", "--env", "NoSuchEnv-v9"], ["registered neither"]),
])
def test_bad_input_from_a_real_process(args, needles, tmp_path):
    """The installed entry point: exit code 2 and one line, with nothing else on stderr."""
    proc = cli(*args, cwd=tmp_path)
    assert_one_line_error(proc, *needles)
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1, proc.stderr


def test_an_env_registered_only_under_a_scripts_main_block_is_named_with_the_fix(tmp_path, capsys, monkeypatch):
    script = tmp_path / "my_train.py"
    script.write_text("import gymnasium as gym\nfrom ray.tune.registry import register_env\n\n"
                      "if __name__ == '__main__':\n"
                      "    register_env('my-cartpole', lambda cfg: gym.make('CartPole-v1'))\n")
    monkeypatch.chdir(tmp_path)
    proc = in_process(capsys, CARTPOLE, "--env", "my-cartpole", "--import", "my_train.py", "--headless",
                      "--episodes", "2")
    assert_one_line_error(proc, "registered only inside `if __name__ == \"__main__\":` of my_train.py (line 5)",
                          "register_env('my-cartpole', your_env_creator)")


def test_tune_trial_directory_takes_the_newest_checkpoint(tmp_path):
    trial = tmp_path / "PPO_CartPole_trial"
    shutil.copytree(CARTPOLE, trial / "checkpoint_000000")
    shutil.copytree(CARTPOLE, trial / "checkpoint_000001")
    (trial / "checkpoint_000001" / "rllib_checkpoint.json").touch()  # newest
    from tests.support.engines import plan_for

    plan = plan_for(trial, "--episodes", "2", log=tmp_path / "run.sqlite")
    assert plan.kind.checkpoint == (trial / "checkpoint_000001").resolve()
    assert "newest of 2" in plan.kind.resolved_note


def test_help_lists_every_command_and_the_pickle_warning():
    proc = cli("--help")
    assert proc.returncode == 0
    for command in ("tui-eval demo", "tui-eval ls", "tui-eval attach", "tui-eval report", "--headless", "--version",
                    "--import"):
        assert command in proc.stdout, command
    assert "only open checkpoints you trust" in " ".join(proc.stdout.split()).lower()


@pytest.mark.parametrize("command", ["demo", "diagnose", "record", "ls", "attach", "stop", "resume", "report"])
def test_every_subcommand_has_its_own_help(command, capsys):
    from tui_eval.cli import main
    from tui_eval.demos import demos

    try:
        code = main([command, "--help"])
    except SystemExit as exc:  # argparse's own --help exits
        code = exc.code
    out = capsys.readouterr().out
    assert code == 0 and out.startswith(f"usage: tui-eval {command} "), out[:200]
    if command == "demo":
        assert all(f"  {name} " in out for name in demos()) and "--num-envs 64" in out


def test_version():
    from importlib.metadata import version

    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"tui-eval {version('tui-eval')}"


@pytest.mark.parametrize("word", ["run", "evalute"])
def test_a_word_that_is_not_a_command_before_a_checkpoint_names_the_commands(capsys, word):
    proc = in_process(capsys, word, CARTPOLE)
    assert_one_line_error(proc, f"{word!r} is not a command", "diagnose", "tui-eval CHECKPOINT [options]")


def test_a_stray_argument_after_a_checkpoint_is_still_called_unrecognized(capsys):
    proc = in_process(capsys, CARTPOLE, "extra")
    assert_one_line_error(proc, "unrecognized arguments: extra")
