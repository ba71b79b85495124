"""`--vs-env` / `--vs-env-config` with a multi-agent checkpoint: every module on a second MultiAgentEnv, per
module and for the team (the zoo's MultiAgentCartPole checkpoint, three agents; the second env has two or
four: MultiAgentCartPole resets every agent's CartPole with the episode's seed, so the agents both envs have
act alike, and with explore off two agents of one module act alike). Refused before any episode: a
single-agent env, and `connectors@vs-env` on agents the checkpoint's restored pipelines were not built for;
`evaluate@vs-env` takes them, through the checkpoint's policy_mapping_fn."""

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
    """(`evaluate@vs-env` takes them: RLlib's runner builds its pipelines for the env it runs; see below.)"""
    refused = in_process(capsys, zoo / "multi_agent", "--headless", "--episodes", "2", "--vs-env-config",
                         '{"num_agents": 4}', "--log", tmp_path / "refused.sqlite")
    assert_one_line_error(refused, "has agents the checkpoint's connector pipelines were not built for (3)",
                          "--paths evaluate,evaluate@vs-env")


def test_evaluate_maps_an_agent_the_checkpoint_never_saw_and_counts_it_in_its_module_and_the_team(zoo, tmp_path,
                                                                                                  capsys):
    """Agent 3 (p{3 % 2} = p1 by the user's lambda) exists on the second env only. Explore off: agents 1 and 3
    start alike and act alike, so p1's return doubles there, while p0 (agents 0 and 2) is unchanged."""
    result, summary = _run(capsys, zoo, tmp_path, "--vs-env-config", '{"num_agents": 4}', "--paths",
                           "evaluate,evaluate@vs-env", "--explore", "evaluate=off", "--explore", "evaluate@vs-env=off")
    episodes = summary["episodes"]
    first, second = _modules(episodes, "evaluate"), _modules(episodes, "evaluate@vs-env")
    assert len(first) == len(second) == 3 and set(first) == set(second)
    team = {(e["path"], e["seed"]): e["return"] for e in episodes}
    for seed, modules in first.items():
        assert set(modules) == set(second[seed]) == {"p0", "p1"}
        assert second[seed]["p0"] == modules["p0"]
        assert second[seed]["p1"]["return"] == 2 * modules["p1"]["return"] > 0
        assert second[seed]["p1"]["agent_steps"] == 2 * modules["p1"]["agent_steps"]
        for path, per_module in (("evaluate", modules), ("evaluate@vs-env", second[seed])):
            assert team[(path, seed)] == sum(m["return"] for m in per_module.values())  # every agent counted
    for module in ("p0", "p1"):
        assert set(summary["modules"][module]["paths"]) == {"evaluate", "evaluate@vs-env"}
        assert all(p["episodes"] == 3 and p["invalid"] == 0 for p in summary["modules"][module]["paths"].values())
    assert summary["modules"]["p0"]["comparison"]["identical_pairs"] == 3
    assert summary["modules"]["p1"]["comparison"]["verdict"] == "differ"
    assert summary["comparison"]["verdict"] == "differ" and summary["comparison"]["differing"] == 3
    assert '(on --vs-env the same env {"num_agents": 4})' in " ".join(result.stderr.split())


def test_a_single_agent_second_env_is_refused_in_one_line(zoo, capsys):
    result = in_process(capsys, zoo / "multi_agent", "--headless", "--vs-env", "CartPole-v1")
    assert_one_line_error(result, "--vs-env 'CartPole-v1' is a single-agent env", "the checkpoint is multi-agent")
