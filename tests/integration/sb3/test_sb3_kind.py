"""The sb3 kind on real SB3 models trained by the tests: a plain PPO zip and an rl-zoo3 SAC run folder with
VecNormalize, played by `predict` (as enjoy.py) and `onnx` (the export a user deploys), and what it reads."""

from __future__ import annotations

import json
import shutil

from tests.support.bad_input import in_process
from tests.support.sb3_runs import ZOO_ENV, export_onnx
from tui_eval.config.spec import RunSpec
from tui_eval.integrations.sb3.kind import Sb3Kind


def _copy(run, tmp_path):
    target = tmp_path / "logs" / "sac" / run.name
    shutil.copytree(run, target)
    return target


def test_a_plain_ppo_zip_and_sb3s_recipe_export_are_identical(ppo_zip, tmp_path, capsys):
    out = tmp_path / "summary.json"
    got = in_process(capsys, ppo_zip, "--env", "CartPole-v1", "--headless", "--in-process", "--episodes", "6",
                     "--num-envs", "3", "--json", out, "--log", tmp_path / "r.sqlite")
    assert got.returncode == 0, got.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["kind"] == "sb3" and list(data["paths"]) == ["predict", "onnx"]
    assert all(p["episodes"] == 6 for p in data["paths"].values()) and "stable-baselines3" in data["versions"]
    assert "verdict: IDENTICAL on 6/6 seeds — predict vs onnx, both deterministic" in got.stdout
    header = got.stderr + got.stdout
    assert "written by tui-eval with SB3's documented ONNX export" in header  # said, not silent
    assert "algorithm: PPO" in header and "actions Discrete(2)" in header
    assert "seeds: 1000000000:1000000006 (held out: training seeded its envs from the zip's seed=3" in header


def test_a_zoo_run_and_its_faithful_export_play_the_same_policy(sac_run, tmp_path, capsys):
    run = _copy(sac_run, tmp_path)
    stats = run / ZOO_ENV / "vecnormalize.pkl"
    export_onnx(run / f"{ZOO_ENV}.zip", run / f"{ZOO_ENV}.onnx", vecnormalize=stats, unscale=True)
    got = in_process(capsys, run, "--headless", "--in-process", "--episodes", "4", "--num-envs", "2",
                     "--log", tmp_path / "r.sqlite")
    assert got.returncode == 0, got.stderr[-2000:]
    verdict = next(line for line in got.stdout.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith(("verdict: IDENTICAL", "verdict: SAME POLICY")), verdict
    header = got.stderr + got.stdout
    assert f"playing {ZOO_ENV}.zip, the run's final model (as rl-zoo3's enjoy.py plays by default)" in header
    assert "normalization: VecNormalize from Pendulum-v1/vecnormalize.pkl, loaded as enjoy.py loads it" in header
    assert f"onnx: {ZOO_ENV}.onnx next to the model, run as it is" in header
    assert "algorithm: SAC" in header and "from args.yml's seed=3" in header


def test_a_zoo_runs_checkpoints_are_read_as_enjoy_reads_them(sac_run):
    first = sac_run / "rl_model_60_steps.zip"
    kind = Sb3Kind(first, RunSpec(checkpoint=str(first)))
    facts = kind.describe()
    assert kind.env_id == ZOO_ENV and kind.algo == "sac" and kind.run is not None
    assert "played with the run's final VecNormalize statistics" in facts["model"] and "issue 282" in facts["model"]
    assert "--load-checkpoint 60" in facts["model"]
    assert kind.run.normalize == {"norm_obs": True, "norm_reward": False}  # enjoy.py: rewards not normalized
    assert "rewards not (norm_reward=False)" in facts["normalization"]
    candidates = Sb3Kind.candidates(sac_run)
    assert [c.path.name for c in candidates] == ["rl_model_60_steps.zip", "rl_model_120_steps.zip", f"{ZOO_ENV}.zip"]
    assert [c.iteration for c in candidates] == [60, 120, None]
