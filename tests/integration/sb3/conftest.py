"""Tiny SB3 models for the sb3 kind's tests, trained once per session by tests/support/sb3_runs.py (seconds)."""

from __future__ import annotations

import os

import pytest

from tests.support.sb3_runs import train_plain, train_ppo_cartpole, train_ppo_pendulum_past_bounds, train_sac_zoo


@pytest.fixture(scope="session", autouse=True)
def sb3_cache(tmp_path_factory):
    """tui-eval's exports of these models go to a cache of the session's own, not the user's."""
    old = os.environ.get("TUI_EVAL_CACHE")
    os.environ["TUI_EVAL_CACHE"] = str(tmp_path_factory.mktemp("sb3-cache"))
    yield
    if old is None:
        os.environ.pop("TUI_EVAL_CACHE", None)
    else:
        os.environ["TUI_EVAL_CACHE"] = old


@pytest.fixture(scope="session")
def ppo_zip(tmp_path_factory):
    """A PPO on CartPole-v1 saved by model.save() alone (the zip does not name its env)."""
    return train_ppo_cartpole(tmp_path_factory.mktemp("ppo"))


@pytest.fixture(scope="session")
def sac_run(tmp_path_factory):
    """A SAC on Pendulum-v1 behind VecNormalize, as an rl-zoo3 run folder (no ONNX export in it)."""
    return train_sac_zoo(tmp_path_factory.mktemp("zoo") / "logs")


@pytest.fixture(scope="session")
def ppo_pendulum_zip(tmp_path_factory):
    """A PPO on Pendulum-v1 whose Gaussian mean lies past the action bounds (±2), as a trained one's does."""
    return train_ppo_pendulum_past_bounds(tmp_path_factory.mktemp("ppo-pendulum"))


@pytest.fixture(scope="session")
def plain_zips(tmp_path_factory):
    """(algo, env id) -> an A2C, DQN or TD3 zip saved by model.save() alone, trained on first use."""
    zips = {}

    def get(algo, env_id):
        if (algo, env_id) not in zips:
            zips[algo, env_id] = train_plain(algo, env_id, tmp_path_factory.mktemp(algo))
        return zips[algo, env_id]

    return get
