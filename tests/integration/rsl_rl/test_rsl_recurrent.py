"""Recurrent rsl_rl actors (RNNModel, LSTM and GRU) on the runner, jit and onnx paths: trained tiny here.

The recurrent state must start from zeros at each world's episode start and be carried within an episode.
"""

from __future__ import annotations

import pytest
import torch

from tests.support.rsl import run_path
from tests.support.rsl_train import recurrent_cfg, train
from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput
from tui_eval.integrations.rsl_rl.kind import RslRlKind

ENV = "PointGoal-v0"
ENV_CONFIG = {"max_episode_steps": 25}
SEEDS = list(range(7_000, 7_006))
PATHS = ("runner", "jit", "onnx")

# what Isaac Lab's RslRlPpoActorCriticRecurrentCfg writes into params/agent.yaml (rsl_rl < 4 names)
ISAAC_LAB_RECURRENT = {
    "seed": 42, "num_steps_per_env": 16, "empirical_normalization": False,
    "obs_groups": {"policy": ["policy"], "critic": ["policy"]},
    "policy": {"class_name": "ActorCriticRecurrent", "init_noise_std": 0.5, "noise_std_type": "scalar",
               "actor_obs_normalization": True, "critic_obs_normalization": True,
               "actor_hidden_dims": [16], "critic_hidden_dims": [16], "activation": "elu",
               "rnn_type": "lstm", "rnn_hidden_dim": 16, "rnn_num_layers": 1},
    "algorithm": {"class_name": "PPO", "value_loss_coef": 1.0, "use_clipped_value_loss": True,
                  "learning_rate": 1e-3, "schedule": "adaptive", "desired_kl": 0.01},
    "tui_eval_env": {"id": ENV, "config": ENV_CONFIG},
}


@pytest.fixture(scope="module", autouse=True)
def export_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TUI_EVAL_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def lstm_checkpoint(tmp_path_factory):
    """An LSTM actor whose run folder has Isaac Lab's agent.yaml (ActorCriticRecurrent)."""
    return train(tmp_path_factory.mktemp("lstm"), recurrent_cfg("lstm"), ENV, ENV_CONFIG,
                 write_cfg=ISAAC_LAB_RECURRENT)


@pytest.fixture(scope="module")
def gru_checkpoint(tmp_path_factory):
    """A 2-layer GRU actor with no cfg at all: everything is inferred from the weights."""
    return train(tmp_path_factory.mktemp("gru"), recurrent_cfg("gru", hidden=12, layers=2), ENV, ENV_CONFIG)


def make_kind(checkpoint, num_envs=3, **spec):
    if not (checkpoint.parent / "params").is_dir():
        spec = {"env_id": ENV, "env_config": ENV_CONFIG, **spec}
    return RslRlKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=num_envs, **spec))


def by_seed(records):
    return {r.seed: (round(r.ret, 4), r.length, r.success, r.invalid) for r in records}


@pytest.mark.parametrize("rnn", ["lstm", "gru"])
def test_runner_jit_onnx_agree_seed_by_seed(rnn, lstm_checkpoint, gru_checkpoint):
    kind = make_kind(lstm_checkpoint if rnn == "lstm" else gru_checkpoint)
    actor = kind.describe()["actor"]
    assert "RNNModel" in actor and rnn.upper() in actor
    assert ("2 layer(s) of 12" in actor) if rnn == "gru" else ("1 layer(s) of 16" in actor)
    results = {}
    for name in PATHS:
        path = kind.build_path(name, False)
        try:
            assert path.recurrent
            results[name] = by_seed(run_path(path, SEEDS))
        finally:
            path.close()
    assert sorted(results["runner"]) == SEEDS  # 3 worlds, 2 episodes each: the reset between them matters too
    assert results["runner"] == results["jit"] == results["onnx"]


def _recording(path):
    """Wrap the path's policy call to keep (observation, action) of every step, in order."""
    steps = []
    act = path._act

    def recorded(obs):
        actions = act(obs)
        steps.append((obs.clone(), actions.clone()))
        return actions

    path._act = recorded
    return steps


def _first_actions(kind, name, observations, reset_each: bool):
    """Actions of a freshly built path fed `observations` in turn (state reset before each, or carried)."""
    path = kind.build_path(name, False)
    try:
        out = []
        with torch.inference_mode():
            path._reset_memory(None)
            for obs in observations:
                if reset_each:
                    path._reset_memory(None)
                out.append(path._act(obs).clone())
        return out
    finally:
        path.close()


@pytest.fixture(scope="module")
def one_world_runs(lstm_checkpoint):
    """Two episodes of one world on each path, with every step's observation and action."""
    kind = make_kind(lstm_checkpoint, num_envs=1)
    runs = {}
    for name in PATHS:
        path = kind.build_path(name, False)
        try:
            steps = _recording(path)
            records = run_path(path, SEEDS[:2])
        finally:
            path.close()
        runs[name] = (records, steps)
    return kind, runs


@pytest.mark.parametrize("name", PATHS)
def test_state_is_reset_when_a_world_starts_its_next_episode(name, one_world_runs):
    kind, runs = one_world_runs
    records, steps = runs[name]
    first_length = records[0].length
    obs_episode_2 = steps[first_length][0]
    fresh = _first_actions(kind, name, [obs_episode_2], reset_each=True)[0]
    torch.testing.assert_close(steps[first_length][1], fresh, rtol=0, atol=1e-6)
    # the test can fail: carrying the first episode's state over gives another action
    carried = _first_actions(kind, name, [o for o, _ in steps[:first_length + 1]], reset_each=False)[-1]
    assert (carried - fresh).abs().max() > 1e-4


@pytest.mark.parametrize("name", PATHS)
def test_state_is_carried_within_an_episode(name, one_world_runs):
    kind, runs = one_world_runs
    records, steps = runs[name]
    episode = [o for o, _ in steps[:records[0].length]]
    taken = torch.cat([a for _, a in steps[:records[0].length]])
    carried = torch.cat(_first_actions(kind, name, episode, reset_each=False))
    memoryless = torch.cat(_first_actions(kind, name, episode, reset_each=True))
    torch.testing.assert_close(taken, carried, rtol=0, atol=1e-5)
    assert (taken - memoryless).abs().max() > 1e-3  # a path that reset every step would act memoryless


def test_isaac_lab_recurrent_cfg_maps_to_rnn_model(lstm_checkpoint):
    kind = make_kind(lstm_checkpoint)
    assert kind.cfg["actor"]["class_name"] == kind.cfg["critic"]["class_name"] == "RNNModel"
    assert kind.cfg["actor"]["rnn_type"] == "lstm" and kind.cfg["actor"]["rnn_hidden_dim"] == 16
    assert "ActorCriticRecurrent" in kind.describe()["notes"]


def test_pre4_recurrent_checkpoint_maps_to_5x(lstm_checkpoint, tmp_path):
    """An rsl_rl < 4 ActorCriticRecurrent checkpoint (model_state_dict, memory_a/memory_c) runs as the 5.x one."""
    data = torch.load(lstm_checkpoint, weights_only=True)
    old = {}
    for prefix, sd in (("a", data["actor_state_dict"]), ("c", data["critic_state_dict"])):
        role = "actor" if prefix == "a" else "critic"
        for key, value in sd.items():
            if key.startswith("rnn."):
                old[f"memory_{prefix}.{key[4:]}"] = value
            elif key.startswith("mlp."):
                old[f"{role}.{key[4:]}"] = value
            elif key.startswith("obs_normalizer."):
                old[f"{role}_obs_normalizer.{key[15:]}"] = value
            elif key == "distribution.std_param":
                old["std"] = value
    folder = tmp_path / "old"
    (folder / "params").mkdir(parents=True)
    (folder / "params" / "agent.yaml").write_text((lstm_checkpoint.parent / "params" / "agent.yaml").read_text())
    torch.save({"model_state_dict": old, "iter": 1}, folder / "model_1.pt")
    kinds = [make_kind(folder / "model_1.pt"), make_kind(lstm_checkpoint)]
    assert "ActorCriticRecurrent" in kinds[0].layout() or "mapped" in kinds[0].layout()
    results = []
    for kind in kinds:
        path = kind.build_path("runner", False)
        try:
            results.append(by_seed(run_path(path, SEEDS[:3])))
        finally:
            path.close()
    assert results[0] == results[1]


@pytest.mark.parametrize(("policy_class", "said"), [
    ("ActorCriticRecurrentTransformer", "'ActorCriticRecurrentTransformer' has no rsl_rl 5 counterpart"),
    ("my_lab.models:FancyActorCritic", "'FancyActorCritic' has no rsl_rl 5 counterpart"),
])
def test_unknown_policy_classes_exit_with_what_to_pass(policy_class, said, lstm_checkpoint, tmp_path):
    import yaml

    cfg = {**ISAAC_LAB_RECURRENT, "policy": {**ISAAC_LAB_RECURRENT["policy"], "class_name": policy_class}}
    file = tmp_path / "agent.yaml"
    file.write_text(yaml.safe_dump(cfg))
    with pytest.raises(BadInput, match="--agent-cfg") as err:
        make_kind(lstm_checkpoint, kind_options={"agent_cfg": str(file)})
    assert said in str(err.value)


def test_isaac_lab_cfg_dumps_of_recurrent_models_normalise_to_5x():
    """Isaac Lab's rsl_rl 4/5 model cfg (RNNModel block with 4.x noise keys) and an rsl_rl 2.x spelling."""
    from tui_eval.integrations.rsl_rl.cfg import normalise_cfg

    actor = {"class_name": "RNNModel", "hidden_dims": [32], "activation": "elu", "obs_normalization": True,
             "stochastic": True, "init_noise_std": 0.7, "noise_std_type": "log", "state_dependent_std": False,
             "rnn_type": "gru", "rnn_hidden_dim": 32, "rnn_num_layers": 2}
    notes: list[str] = []
    cfg = normalise_cfg({"actor": actor, "critic": {**actor, "stochastic": False}, "num_steps_per_env": 24}, notes)
    assert cfg["actor"]["distribution_cfg"] == {"class_name": "GaussianDistribution", "init_std": 0.7,
                                                "std_type": "log"}
    assert (cfg["actor"]["rnn_type"], cfg["actor"]["rnn_num_layers"]) == ("gru", 2)
    assert cfg["critic"]["class_name"] == "RNNModel" and cfg["critic"]["distribution_cfg"] is None
    old = {"policy": {**ISAAC_LAB_RECURRENT["policy"], "class_name": "rsl_rl.modules:ActorCriticRecurrent",
                      "rnn_hidden_size": 48}}
    del old["policy"]["rnn_hidden_dim"]
    cfg = normalise_cfg(old, notes)
    assert cfg["actor"]["rnn_hidden_dim"] == cfg["critic"]["rnn_hidden_dim"] == 48


def test_the_doctor_replays_a_recurrent_actor_and_finds_nothing_on_faithful_paths(lstm_checkpoint, tmp_path):
    """runner vs jit on an LSTM actor: the replay records each path's input and actions (no MLP stages rebuilt
    from parts a recurrent actor lacks), the paths agree, and there is no finding."""
    import json

    from tests.support.common import cli

    out = tmp_path / "diagnosis.json"
    proc = cli("diagnose", lstm_checkpoint, "--paths", "runner,jit", "--episodes", "2", "--json", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["findings"] == []
    for name in ("runner", "jit"):
        stages = report["replay"]["paths"][name]["stages"]
        assert "action_for_env" in stages and "module_out" not in stages, stages
