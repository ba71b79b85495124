"""`--vs-env` / `--vs-env-config` with a multi-agent checkpoint: every module on a second MultiAgentEnv, per
module and for the team (the zoo's MultiAgentCartPole checkpoint, three agents; the second env has two:
MultiAgentCartPole seeds agent i's CartPole from the reset seed and i, so the agents both envs have act
alike). Refused before any episode: a single-agent env, and `connectors@vs-env` on agents the checkpoint's
restored pipelines were not built for."""

from __future__ import annotations

import json

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.common import SUPPORT

LOOPS = SUPPORT / "user_project" / "my_marl_loop.py"


def _modules(episodes: list[dict], path: str) -> dict[int, dict]:
    return {e["seed"]: e["modules"] for e in episodes if e["path"] == path}


def _run(capsys, zoo, tmp_path, *args):
    result = in_process(capsys, zoo / "multi_agent", "--headless", "--episodes", "3", *args,
                        "--json", tmp_path / "s.json", "--log", tmp_path / "run.sqlite")
    assert result.returncode == 0, result.stderr[-3000:]
    return result, json.loads((tmp_path / "s.json").read_text())


def test_two_agents_on_the_second_env_the_restored_pipelines_and_a_user_loop(zoo, tmp_path, capsys):
    """Agent 2 (mapped to p0) is not there: p0 loses its return, p1 (agent 1) acts as on the first env."""
    result, summary = _run(capsys, zoo, tmp_path, "--vs-env-config", '{"num_agents": 2}', "--path",
                           f"loop={LOOPS}:make_loop", "--paths", "connectors,connectors@vs-env,loop@vs-env")
    episodes = summary["episodes"]
    first, second = _modules(episodes, "connectors"), _modules(episodes, "connectors@vs-env")
    assert len(first) == len(second) == 3 and _modules(episodes, "loop@vs-env") == second
    for seed, modules in first.items():
        assert second[seed]["p1"] == modules["p1"]
        assert 0 < second[seed]["p0"]["agent_steps"] < modules["p0"]["agent_steps"]
    assert summary["modules"]["p1"]["comparison"]["b"] == "connectors@vs-env"
    assert '(on --vs-env the same env {"num_agents": 2})' in " ".join(result.stderr.split())


def test_connectors_on_agents_its_restored_pipelines_do_not_know_is_refused_in_one_line(zoo, tmp_path, capsys):
    """(`evaluate@vs-env` takes them: RLlib's runner builds its pipelines for the env it runs; not run here, an
    Algorithm build is the slow part of a test.)"""
    refused = in_process(capsys, zoo / "multi_agent", "--headless", "--episodes", "2", "--vs-env-config",
                         '{"num_agents": 4}', "--log", tmp_path / "refused.sqlite")
    assert_one_line_error(refused, "has agents the checkpoint's connector pipelines were not built for (3)",
                          "--paths evaluate,evaluate@vs-env")


def test_a_single_agent_second_env_is_refused_in_one_line(zoo, capsys):
    result = in_process(capsys, zoo / "multi_agent", "--headless", "--vs-env", "CartPole-v1")
    assert_one_line_error(result, "--vs-env 'CartPole-v1' is a single-agent env", "the checkpoint is multi-agent")
