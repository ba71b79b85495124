"""Dict observations (SB3's MultiInputPolicy): the export has one input per key and the onnx path feeds each part
by its name, so `predict` and `onnx` play identical episodes; a user's export of one input for such a model is
one line and exit 2 before the run's header."""

from __future__ import annotations

import pytest
import torch

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.sb3_dict_env import ENV_ID
from tests.support.sb3_runs import train_ppo_dict_obs


@pytest.fixture(scope="module")
def dict_zip(tmp_path_factory):
    return train_ppo_dict_obs(tmp_path_factory.mktemp("dict"))


def test_a_dict_observation_model_plays_identically_on_predict_and_onnx(dict_zip, tmp_path, capsys):
    model = tmp_path / dict_zip.name
    model.write_bytes(dict_zip.read_bytes())
    got = in_process(capsys, model, "--env", ENV_ID, "--headless", "--in-process", "--episodes", "4",
                     "--num-envs", "2", "--log", tmp_path / "r.sqlite")
    assert got.returncode == 0, got.stderr[-2000:]
    header = got.stderr + got.stdout
    assert "spaces: Dict observations {'position': Box(" in header and "'velocity': Box(" in header
    assert "verdict: IDENTICAL on 4/4 seeds — predict vs onnx, both deterministic" in got.stdout


def test_a_users_export_of_one_input_for_dict_observations_is_one_line(dict_zip, tmp_path, capsys):
    model = tmp_path / dict_zip.name
    model.write_bytes(dict_zip.read_bytes())
    flat = torch.nn.Linear(4, 2)  # what a user exports after flattening the observation themselves
    torch.onnx.export(flat, torch.zeros((1, 4)), str(tmp_path / "policy.onnx"), opset_version=17, dynamo=False,
                      input_names=["obs"])
    got = in_process(capsys, model, "--env", ENV_ID, "--headless", "--in-process", "--episodes", "2",
                     "--log", tmp_path / "r.sqlite")
    assert_one_line_error(got, "policy.onnx takes inputs ['obs'] but the model's observations are a Dict of "
                               "['position', 'velocity']")
    assert "seeds:" not in got.stderr + got.stdout  # before the run's header
