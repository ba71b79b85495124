"""Reading rsl_rl checkpoints: cfg sources, inference from the weights, old layouts, clear bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from rsl_rl.models import MLPModel
from tensordict import TensorDict

from tests.support.bad_input import in_process
from tests.support.rsl import DEMO_DIR, ROOT, demo_checkpoint, run_path
from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput
from tui_eval.integrations.rsl_rl.cfg import infer_cfg, normalise_cfg, read_cfg_file
from tui_eval.integrations.rsl_rl.kind import RslRlKind
from tui_eval.integrations.rsl_rl.paths.model import model_class
from tui_eval.kinds import load_kind

OBS = TensorDict({"policy": torch.zeros(1, 4)}, batch_size=[1])
GROUPS = {"actor": ["policy"], "critic": ["policy"]}


def build(block: dict, sd: dict | None = None, out: int = 2) -> MLPModel:
    cls, kwargs = model_class(block)
    model = cls(OBS, GROUPS, "actor", out, **kwargs)
    if sd is not None:
        model.load_state_dict(sd, strict=True)
    return model.eval()


def same_actions(a: MLPModel, b: MLPModel) -> bool:
    obs = TensorDict({"policy": torch.randn(64, 4) * 2}, batch_size=[64])
    with torch.inference_mode():
        return torch.equal(a(obs), b(obs))


def lone_checkpoint(tmp_path):
    """The demo's weights alone: no params/agent.yaml, no exported/ next to them."""
    target = tmp_path / "run" / "model_39.pt"
    target.parent.mkdir()
    shutil.copy(demo_checkpoint(), target)
    return target


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert message and "\n" not in message and "Traceback" not in message
    return message


def test_inferred_cfg_matches_the_real_one(tmp_path):
    ckpt = lone_checkpoint(tmp_path)
    kind = RslRlKind(ckpt, RunSpec(checkpoint=str(ckpt), env_id="PointGoal-v0"))
    assert kind.describe()["config"].startswith("inferred from the state dict")
    real = normalise_cfg(read_cfg_file(DEMO_DIR / "params" / "agent.yaml"), [])
    for key in ("hidden_dims", "activation", "obs_normalization"):
        assert kind.cfg["actor"][key] == real["actor"][key]
        assert kind.cfg["critic"][key] == real["critic"][key]
    assert kind.cfg["actor"]["distribution_cfg"]["std_type"] == real["actor"]["distribution_cfg"]["std_type"]
    weights = torch.load(ckpt, weights_only=True)["actor_state_dict"]
    assert same_actions(build(kind.cfg["actor"], weights), build(real["actor"], weights))
    assert "rsl_rl's default" in kind.describe()["actor"]
    # the activation is not in the weights; an exported/policy.pt next to them tells it
    shutil.copytree(DEMO_DIR / "exported", ckpt.parent / "exported")
    kind = RslRlKind(ckpt, RunSpec(checkpoint=str(ckpt), env_id="PointGoal-v0"))
    assert "activation: read from exported/policy.pt" in kind.describe()["actor"]


@pytest.mark.parametrize("block", [
    {"hidden_dims": [32, 16], "activation": "elu", "obs_normalization": False,
     "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 0.5, "std_type": "log"}},
    {"hidden_dims": [8], "activation": "tanh", "obs_normalization": True,
     "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "scalar"}},
    {"hidden_dims": [16, 16, 16], "activation": "elu", "obs_normalization": True, "distribution_cfg": None},
])
def test_inference_rebuilds_models_from_their_weights(block):
    torch.manual_seed(0)
    original = build({"class_name": "MLPModel", **block})
    if block["obs_normalization"]:  # non-trivial normalizer statistics
        original.obs_normalizer._mean.normal_()
        original.obs_normalizer._std.uniform_(0.5, 2.0)
    sd = original.state_dict()
    cfg = infer_cfg(sd, None, block["activation"], 2, DEMO_DIR / "synthetic.pt")
    assert cfg["actor"]["hidden_dims"] == block["hidden_dims"]
    assert same_actions(build(cfg["actor"], sd), original)


def test_state_dependent_std_is_ambiguous_without_a_cfg():
    model = build({"class_name": "MLPModel", "hidden_dims": [8], "distribution_cfg": {
        "class_name": "HeteroscedasticGaussianDistribution", "init_std": 1.0}})
    with pytest.raises(BadInput, match="--agent-cfg") as exc:
        infer_cfg(model.state_dict(), None, "elu", 2, DEMO_DIR / "synthetic.pt")
    one_line(exc)


def test_wrong_agent_cfg_names_the_mismatch(tmp_path):
    cfg = yaml.safe_load((DEMO_DIR / "params" / "agent.yaml").read_text())
    cfg["actor"]["hidden_dims"] = [128, 128]
    wrong = tmp_path / "agent.yaml"
    wrong.write_text(yaml.safe_dump(cfg))
    ckpt = demo_checkpoint()
    with pytest.raises(BadInput) as exc:
        RslRlKind(ckpt, RunSpec(checkpoint=str(ckpt), kind_options={"agent_cfg": str(wrong)}))
    message = one_line(exc)
    assert "actor mlp.0.weight is [64, 4] in the checkpoint but [128, 4]" in message and "--agent-cfg" in message

    cfg["actor"]["hidden_dims"] = [64, 64]
    cfg["actor"]["distribution_cfg"]["std_type"] = "log"
    wrong.write_text(yaml.safe_dump(cfg))
    with pytest.raises(BadInput, match="log_std_param") as exc:
        RslRlKind(ckpt, RunSpec(checkpoint=str(ckpt), kind_options={"agent_cfg": str(wrong)}))
    one_line(exc)


@pytest.mark.parametrize("content", ["tensor", "dict", "garbage"])
def test_a_pt_that_is_not_an_rsl_rl_checkpoint(tmp_path, content):
    file = tmp_path / "model_1.pt"
    if content == "tensor":
        torch.save(torch.zeros(3), file)
    elif content == "dict":
        torch.save({"state_dict": {"w": torch.zeros(2)}, "epoch": 3}, file)
    else:
        file.write_bytes(b"not a torch file at all")
    with pytest.raises(BadInput, match="rsl_rl|torch checkpoint|model_1.pt is unreadable") as exc:  # garbage: unread
        load_kind(RunSpec(checkpoint=str(file), env_id="PointGoal-v0"))
    one_line(exc)


def test_missing_env_and_malformed_recurrent_weights_are_bad_input(tmp_path):
    ckpt = lone_checkpoint(tmp_path)
    with pytest.raises(BadInput, match="pass --env ID") as exc:
        RslRlKind(ckpt, RunSpec(checkpoint=str(ckpt)))
    one_line(exc)
    data = torch.load(ckpt, weights_only=True)
    data["actor_state_dict"]["rnn.rnn.weight_ih_l0"] = torch.zeros(4, 4)
    recurrent = tmp_path / "model_rnn.pt"
    torch.save(data, recurrent)
    with pytest.raises(BadInput, match="not an rsl_rl RNNModel's") as exc:
        RslRlKind(recurrent, RunSpec(checkpoint=str(recurrent), env_id="PointGoal-v0"))
    one_line(exc)


def test_pre_4_checkpoint_is_mapped_and_runs(tmp_path, monkeypatch):
    """An rsl_rl 3.x ActorCritic checkpoint (model_state_dict) of the same weights plays the same episodes."""
    monkeypatch.setenv("TUI_EVAL_CACHE", str(tmp_path / "cache"))
    data = torch.load(demo_checkpoint(), weights_only=True)
    old = {}
    for key, value in data["actor_state_dict"].items():
        old[key.replace("mlp.", "actor.").replace("obs_normalizer.", "actor_obs_normalizer.")
            .replace("distribution.std_param", "std")] = value
    for key, value in data["critic_state_dict"].items():
        old[key.replace("mlp.", "critic.").replace("obs_normalizer.", "critic_obs_normalizer.")] = value
    file = tmp_path / "model_old.pt"
    torch.save({"model_state_dict": old, "iter": 39, "infos": None}, file)
    # and an rsl_rl 3.x style cfg (policy: ActorCritic) for it
    cfg = {"seed": 42, "num_steps_per_env": 24, "tui_eval_env": "PointGoal-v0",
           "policy": {"class_name": "ActorCritic", "init_noise_std": 1.0, "noise_std_type": "scalar",
                      "actor_obs_normalization": True, "critic_obs_normalization": True,
                      "actor_hidden_dims": [64, 64], "critic_hidden_dims": [64, 64], "activation": "elu"},
           "algorithm": {"class_name": "PPO", "learning_rate": 0.001, "rnd_cfg": None, "unknown_key": 1}}
    agent = tmp_path / "agent.json"
    agent.write_text(json.dumps(cfg))
    seeds = range(7_000, 7_006)
    results = {}
    for name, ckpt, agent_cfg in (("old", file, str(agent)), ("new", demo_checkpoint(), None)):
        kind = RslRlKind(ckpt, RunSpec(checkpoint=str(ckpt), kind_options={"agent_cfg": agent_cfg}, num_envs=3))
        path = kind.build_path("runner", False)
        try:
            results[name] = {r.seed: (r.ret, r.length, r.success) for r in run_path(path, seeds)}
        finally:
            path.close()
        if name == "old":
            facts = kind.describe()
            assert "model_state_dict" in facts["format"] and "unknown_key" in facts["notes"]
            assert "mapped" in path.description
    assert results["old"] == results["new"]


def test_isaac_lab_cfg_forms(tmp_path):
    # rsl_rl 4.x model keys, a python/tuple tag as Isaac Lab's dump_yaml writes, keys a class does not take
    text = """
seed: 7
device: cuda:0
num_steps_per_env: 24
obs_groups: {policy: [policy], critic: [policy]}
clip_actions: null
actor:
  class_name: MLPModel
  hidden_dims: !!python/tuple [64, 64]
  activation: elu
  obs_normalization: true
  stochastic: true
  init_noise_std: 1.0
  noise_std_type: log
  state_dependent_std: false
critic: {class_name: MLPModel, hidden_dims: [64, 64], activation: elu, obs_normalization: true, stochastic: false}
algorithm: {class_name: PPO, learning_rate: 0.001, symmetry_cfg: null, lidar_prediction_cfg: null}
"""
    file = tmp_path / "agent.yaml"
    file.write_text(text)
    notes: list[str] = []
    cfg = normalise_cfg(read_cfg_file(file), notes)
    assert cfg["actor"]["hidden_dims"] == [64, 64]
    assert cfg["actor"]["distribution_cfg"] == {"class_name": "GaussianDistribution", "init_std": 1.0,
                                                "std_type": "log"}
    assert cfg["critic"]["distribution_cfg"] is None
    # a key left at null changes nothing: dropped without a note (a key with a value gets one, below)
    assert "lidar_prediction_cfg" not in cfg["algorithm"] and not any("lidar_prediction_cfg" in n for n in notes)
    build(cfg["actor"])  # rsl_rl accepts the mapped block


def test_cli_exit_codes(tmp_path, capsys, monkeypatch):
    env = dict(os.environ, TUI_EVAL_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    not_ckpt = tmp_path / "model_1.pt"
    torch.save(torch.zeros(3), not_ckpt)
    monkeypatch.chdir(tmp_path)
    bad = in_process(capsys, not_ckpt, "--headless")  # the real entry point; a real process follows
    assert bad.returncode == 2, bad.stderr
    assert "Traceback" not in bad.stderr and "not an rsl_rl checkpoint" in bad.stderr
    summary = tmp_path / "summary.json"
    ok = subprocess.run([sys.executable, "-m", "tui_eval.cli", str(demo_checkpoint()), "--headless",
                         "--episodes", "6", "--num-envs", "3", "--json", str(summary), "--log",
                         str(tmp_path / "run.db")], cwd=tmp_path, env=env, capture_output=True, text=True,
                        timeout=180)
    assert ok.returncode == 0, ok.stderr[-2000:]
    data = json.loads(summary.read_text())
    assert data["kind"] == "rsl_rl" and set(data["paths"]) == {"runner", "jit"}
    # 6 identical seeds of two deterministic paths are not yet enough to say "equivalent"
    assert data["comparison"]["verdict"] == "undecided" and data["comparison"]["exact"] is True
    assert data["comparison"]["identical_pairs"] == 6


def _framework_run(tmp_path: Path, tag: str) -> Path:
    """A run folder laid out as Isaac Lab's or mjlab's train writes it, around the demo's checkpoint."""
    run = tmp_path / "logs" / "rsl_rl" / "anymal_d_flat" / "2026-12-01_10-00-00"
    (run / "params").mkdir(parents=True)
    (run / "params" / "env.yaml").write_text(f"viewer:\n  eye: !!python/tuple\n  - 7.5\nsim:\n  physics: {tag} ''\n")
    (run / "params" / "agent.yaml").write_text((DEMO_DIR / "params" / "agent.yaml").read_text())
    shutil.copy(demo_checkpoint(), run / "model_39.pt")
    return run


def test_an_isaac_lab_run_without_a_factory_says_what_to_pass(tmp_path, capsys):
    run = _framework_run(tmp_path, "!!python/name:isaaclab.sim.simulation_cfg.PhysxCfg")
    spec = RunSpec(checkpoint=str(run / "model_39.pt"))
    agent = read_cfg_file(run / "params" / "agent.yaml")
    agent.pop("tui_eval_env", None)
    (run / "params" / "agent.yaml").write_text(yaml.safe_dump(agent))
    with pytest.raises(BadInput, match="an Isaac Lab run: .*--vecenv your_module:make_env"):
        load_kind(spec)
    # the same layout with a tag of neither framework: the plain rsl_rl line
    (run / "params" / "env.yaml").write_text("sim:\n  dt: 0.005\n")
    with pytest.raises(BadInput, match="does not say which env it was trained on"):
        load_kind(spec)


def test_an_mjlab_run_folder_is_recognised_from_its_files(tmp_path):
    from tui_eval.integrations.rsl_rl.mjlab.kind import MjlabKind
    from tui_eval.integrations.rsl_rl.run_folder import checkpoints

    run = _framework_run(tmp_path, "!!python/name:mjlab.entity.entity.%3Clambda%3E")
    shutil.copy(run / "model_39.pt", run / "model_7.pt")
    assert MjlabKind.recognise(run) and MjlabKind.recognise(run / "model_39.pt")
    assert [p.name for p in checkpoints(run)] == ["model_7.pt", "model_39.pt"]  # by iteration, not by name
    assert not MjlabKind.recognise(DEMO_DIR / "model_39.pt")
    isaac = _framework_run(tmp_path / "isaac", "!!python/name:isaaclab.sim.simulation_cfg.PhysxCfg")
    assert not MjlabKind.recognise(isaac) and not MjlabKind.recognise(isaac / "model_39.pt")
