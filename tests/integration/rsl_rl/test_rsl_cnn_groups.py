"""A CNNModel actor on an image observation group, with a privileged MLP critic on other groups: trained tiny
here (PixelPointGoal-v0), run on the runner, jit and onnx paths, which feed exactly the actor's groups."""

from __future__ import annotations

import pytest
import torch

from tests.support.rsl import ListFeed, run_path
from tests.support.rsl_train import SMALL_PPO, train
from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput
from tui_eval.integrations.rsl_rl.kind import RslRlKind

ENV = "PixelPointGoal-v0"
SEEDS = list(range(8_000, 8_006))
PATHS = ("runner", "jit", "onnx")
CFG = {
    "num_steps_per_env": 16,
    "obs_groups": {"actor": ["goal", "image"], "critic": ["state", "goal"]},
    "actor": {"class_name": "CNNModel", "hidden_dims": [16], "activation": "elu", "obs_normalization": True,
              "cnn_cfg": {"output_channels": [4], "kernel_size": 3, "flatten": True},
              "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 0.5}},
    "critic": {"class_name": "MLPModel", "hidden_dims": [16], "activation": "elu", "obs_normalization": True},
    "algorithm": dict(SMALL_PPO),
}


@pytest.fixture(scope="module")
def kind(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TUI_EVAL_CACHE", str(tmp_path_factory.mktemp("cache")))
        checkpoint = train(tmp_path_factory.mktemp("cnn"), CFG, ENV,
                           write_cfg={**CFG, "tui_eval_env": {"id": ENV, "config": {}}})
        yield RslRlKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=3))


@pytest.fixture(scope="module")
def paths(kind):
    built = {name: kind.build_path(name, False) for name in PATHS}
    yield built
    for path in built.values():
        path.close()


def test_cnn_actor_runs_alike_on_every_path(kind, paths):
    facts = kind.describe()
    assert "CNNModel (CNN channels [4])" in facts["actor"]
    assert facts["obs groups"] == "actor: goal, image; critic: state, goal"
    results = {name: {r.seed: (round(r.ret, 4), r.length, r.invalid) for r in run_path(path, SEEDS)}
               for name, path in paths.items()}
    assert sorted(results["runner"]) == SEEDS
    assert results["runner"] == results["jit"] == results["onnx"]
    assert paths["jit"].groups == ["goal"] and paths["jit"].image_groups == ["image"]
    assert paths["onnx"].image_inputs == ["image"]


def test_paths_read_only_the_actor_groups(paths):
    """The critic's privileged group does not reach the actor on any path; the image does."""
    for name, path in paths.items():
        obs = path.env.begin(ListFeed(SEEDS[:3]))  # live worlds: the onnx path acts only for those
        scrambled_state = obs.clone()
        scrambled_state["state"] = torch.randn_like(obs["state"]) * 5
        moved = obs.clone()
        moved["image"] = torch.roll(obs["image"], shifts=3, dims=-1)
        with torch.inference_mode():
            base = path._act(obs)
            torch.testing.assert_close(path._act(scrambled_state), base, msg=name)
            assert (path._act(moved) - base).abs().max() > 0, name


def test_cnn_cfg_is_not_guessed_from_weights(kind, tmp_path):
    checkpoint = kind.checkpoint
    alone = tmp_path / "model_1.pt"
    alone.write_bytes(checkpoint.read_bytes())
    with pytest.raises(BadInput, match="CNN encoders .* pass the run's params/agent.yaml with --agent-cfg"):
        RslRlKind(alone, RunSpec(checkpoint=str(alone), env_id=ENV))
