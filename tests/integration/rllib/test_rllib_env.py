"""Envs are made as RLlib 2.60's SingleAgentEnvRunner makes them: Tune-registered creators with an
EnvContext, Gymnasium ids with env_config as make() keyword arguments."""

from __future__ import annotations

import gymnasium as gym
import pytest
from ray.tune.registry import register_env

from tui_eval.errors import BadInput
from tui_eval.integrations.rllib.paths.env import resolve_env

SEEN_CONTEXTS = []


def _creator(context):
    SEEN_CONTEXTS.append(context)
    return gym.make("CartPole-v1", max_episode_steps=context["steps"])


register_env("TestTuneCartPole-v0", _creator)


def test_a_tune_registered_creator_gets_exactly_its_env_config():
    recipe = resolve_env("TestTuneCartPole-v0", {"steps": 7})
    assert "ray.tune.register_env('TestTuneCartPole-v0'" in recipe.source
    SEEN_CONTEXTS.clear()
    vec = recipe.make_vec(3)
    assert vec.num_envs == 3 and len(SEEN_CONTEXTS) == 3
    for context in SEEN_CONTEXTS:
        assert dict(context) == {"steps": 7}
        assert (context.worker_index, context.num_workers) == (0, 0)  # a local EnvRunner's
    vec.reset(seed=1)
    for _ in range(1, 8):
        _, _, terminated, truncated, infos = vec.step(vec.action_space.sample())
    assert (terminated | truncated).all()  # the creator's time limit of 7 steps
    assert isinstance(infos, list)  # DictInfoToList, as RLlib wraps its vector env


def test_a_gymnasium_id_takes_env_config_as_make_arguments():
    recipe = resolve_env("CartPole-v1", {"max_episode_steps": 5})
    assert recipe.source == "Gymnasium registry" and recipe.creator is None
    env = recipe.make_one()
    env.reset(seed=0)
    steps = 0
    while True:
        steps += 1
        _, _, terminated, truncated, _ = env.step(0 if steps % 2 else 1)
        if terminated or truncated:
            break
    assert steps <= 5


def test_module_colon_id_imports_the_module_first():
    recipe = resolve_env("tests.support.fault_envs:NanCartPole-v0", {})
    assert recipe.make_one() is not None


def test_a_callable_env_is_called_with_a_context():
    recipe = resolve_env(_creator, {"steps": 3})
    assert recipe.source.startswith("callable ") and recipe.make_one() is not None


@pytest.mark.parametrize("env, needle", [
    ("NoSuchEnv-v0", "--import MODULE_OR_FILE"),
    ("no_such_module_at_all:Env-v0", "cannot import 'no_such_module_at_all'"),
    (None, "neither an env name nor a callable"),
])
def test_unknown_envs_say_how_to_make_them_known(env, needle):
    with pytest.raises(BadInput, match="") as caught:
        resolve_env(env, {})
    assert needle in str(caught.value)
