"""Each algorithm the kind runs opens and plays: an A2C and a DQN (Discrete actions) with the export tui-eval writes
by SB3's recipe, a TD3 (Box actions) with the export a user writes by that recipe and unscales; `predict` and
`onnx` play the same policy."""

from __future__ import annotations

import json

import pytest

from tests.support.bad_input import in_process
from tests.support.sb3_runs import export_onnx


@pytest.mark.parametrize("algo, env_id, actions", [
    ("a2c", "CartPole-v1", "actions Discrete(2)"),
    ("dqn", "CartPole-v1", "actions Discrete(2)"),
    ("td3", "Pendulum-v1", "actions Box("),
])
def test_each_algorithm_plays_the_same_policy_on_predict_and_onnx(algo, env_id, actions, plain_zips, tmp_path,
                                                                   capsys):
    model = tmp_path / f"{algo}.zip"
    model.write_bytes(plain_zips(algo, env_id).read_bytes())
    if algo == "td3":  # its actor's tanh output, unscaled as predict unscales it: the faithful export
        export_onnx(model, tmp_path / f"{algo}.onnx", unscale=True, algo=algo)
    out = tmp_path / "summary.json"
    got = in_process(capsys, model, "--env", env_id, "--headless", "--in-process", "--episodes", "4",
                     "--num-envs", "2", "--json", out, "--log", tmp_path / "r.sqlite")
    assert got.returncode == 0, got.stderr[-2000:]
    header = got.stderr + got.stdout
    assert f"algorithm: {algo.upper()} (stable-baselines3" in header and actions in header
    verdict = next(line for line in got.stdout.splitlines() if line.startswith("verdict:"))
    # identical episodes, not only the same policy: the policies' agreement is rechecked on deterministic reruns,
    # which would call a `predict` that samples in the run the same policy
    assert verdict.startswith("verdict: IDENTICAL on 4/4 seeds — predict vs onnx, both deterministic"), verdict
    data = json.loads(out.read_text())
    assert all(p["episodes"] == 4 for p in data["paths"].values()), data["paths"]
