"""What the sb3 kind cannot open gets one line on stderr and exit 2: a zip that is not SB3's, an rl-zoo3 run folder
without a model, a model of an algorithm the kind does not run, a plain zip that does not name its env."""

from __future__ import annotations

import json
import zipfile

import pytest

from tests.support.bad_input import assert_one_line_error, in_process


def _not_sb3(tmp_path):
    path = tmp_path / "notes.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "not a model")
    return path, ("is a zip but not a whole Stable-Baselines3 model", "model.save()")


def _zoo_without_model(tmp_path):
    run = tmp_path / "logs" / "ppo" / "CartPole-v1_1"
    (run / "CartPole-v1").mkdir(parents=True)
    (run / "CartPole-v1" / "args.yml").write_text("algo: ppo\nenv: CartPole-v1\nseed: 0\n")
    (run / "CartPole-v1" / "config.yml").write_text("policy: MlpPolicy\nn_timesteps: 1000\n")
    return run, ("rl-zoo3 run folder without a model", "CartPole-v1.zip")


def _unknown_algorithm(tmp_path, ppo_zip):
    """A PPO zip whose policy class says sb3-contrib's TQC (the JSON summary the kind reads, nothing else)."""
    path = tmp_path / "tqc.zip"
    with zipfile.ZipFile(ppo_zip) as src, zipfile.ZipFile(path, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "data":
                doc = json.loads(data)
                doc["policy_class"]["__module__"] = "sb3_contrib.tqc.policies"
                data = json.dumps(doc).encode()
            dst.writestr(name, data)
    return path, ("an algorithm the sb3 kind does not run", "sb3_contrib.tqc.policies", "PPO, A2C, DQN, SAC, TD3")


@pytest.mark.parametrize("case", ["not-sb3", "zoo-without-model", "unknown-algorithm", "no-env"])
def test_bad_input_is_one_line_and_exit_2(case, tmp_path, ppo_zip, capsys):
    if case == "not-sb3":
        path, needles = _not_sb3(tmp_path)
    elif case == "zoo-without-model":
        path, needles = _zoo_without_model(tmp_path)
    elif case == "unknown-algorithm":
        path, needles = _unknown_algorithm(tmp_path, ppo_zip)
    else:
        path, needles = ppo_zip, ("does not say which env it was trained on", "pass --env ID")
    got = in_process(capsys, path, "--headless", "--episodes", "2", "--log", tmp_path / "r.sqlite")
    assert_one_line_error(got, *needles)


def test_an_algorithm_named_by_the_run_folder_that_the_kind_does_not_run(tmp_path, ppo_zip, capsys):
    run = tmp_path / "logs" / "tqc" / "CartPole-v1_1"
    (run / "CartPole-v1").mkdir(parents=True)
    (run / "CartPole-v1" / "args.yml").write_text("algo: tqc\nenv: CartPole-v1\nseed: 0\n")
    (run / "CartPole-v1" / "config.yml").write_text("policy: MlpPolicy\nn_timesteps: 1000\n")
    (run / "CartPole-v1.zip").write_bytes(ppo_zip.read_bytes())
    got = in_process(capsys, run, "--headless", "--episodes", "2", "--log", tmp_path / "r.sqlite")
    assert_one_line_error(got, "names algorithm 'tqc', which the sb3 kind does not run")


def test_a_model_opened_without_stable_baselines3_is_one_line_before_any_header(tmp_path, ppo_zip, capsys,
                                                                              monkeypatch):
    """A fake for a fault the suite cannot cause otherwise (Stable-Baselines3 is in the test extra): the import
    system says it is not installed."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "stable_baselines3" else
                        real(name, *a))
    log = tmp_path / "r.sqlite"
    got = in_process(capsys, ppo_zip, "--env", "CartPole-v1", "--headless", "--episodes", "2", "--log", log)
    assert_one_line_error(got, "is a Stable-Baselines3 PPO model", "pip install 'tui-eval[sb3]'")  # no header
