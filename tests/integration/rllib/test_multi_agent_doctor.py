"""`tui-eval diagnose` on the zoo's multi-agent checkpoint (MultiAgentCartPole, three agents, p0 for agents 0
and 2): the static diff and the multi-agent replay name a user loop that samples against `connectors`; the
mapping probe names a user loop that maps every agent to the other module, with its proof; the single-agent
probes are skipped with a note; on LSTM modules the state probe names a loop that carries each agent's state
over between episodes (the faithful one has no finding)."""

from __future__ import annotations

import json

import pytest

from tests.support.bad_input import in_process
from tests.support.common import SUPPORT

LOOPS = SUPPORT / "user_project" / "my_marl_loop.py"


def test_diagnose_names_explore_and_a_wrong_agent_mapping_with_its_proof(zoo, tmp_path, capsys):
    result = in_process(capsys, "diagnose", zoo / "multi_agent", "--path", f"swapped={LOOPS}:make_swapped_loop",
                        "--path", f"loop={LOOPS}:make_loop", "--paths", "connectors,swapped,loop",
                        "--explore", "loop=on", "--episodes", "3", "--json", tmp_path / "d.json")
    assert result.returncode == 0, result.stderr[-3000:]
    d = json.loads((tmp_path / "d.json").read_text())
    by_path = {tuple(f["paths"]): f for f in d["findings"]}
    assert set(by_path) == {("connectors", "swapped"), ("connectors", "loop")}
    mapping = by_path[("connectors", "swapped")]
    assert d["findings"][0] is not None and d["findings"][0]["cause"] == mapping["cause"]
    assert "maps agents to other modules than the checkpoint's policy_mapping_fn" in mapping["cause"]
    for agent, wrong, right in ((0, "p1", "p0"), (1, "p0", "p1"), (2, "p1", "p0")):
        assert f"agent {agent} -> {wrong} (checkpoint: {right})" in mapping["cause"]
    length = d["replay"]["paths"]["swapped"]["length"]
    assert f"proof: with the mapping 0 -> p1, 1 -> p0, 2 -> p1, `connectors` sends `swapped`'s actions at " \
           f"every one of its {length} steps of seed {d['seed']}" in mapping["evidence"]
    assert mapping["step"] == 0 and "policy_mapping_fn" in mapping["fix"]
    explore = by_path[("connectors", "loop")]  # the loop samples (its factory got explore=True)
    assert "`loop` samples actions" in explore["cause"] and "--explore loop=off" in explore["fix"]
    assert d["differ"] == {"explore": {"connectors": False, "swapped": False, "loop": True}}
    assert {"weights", "env_config"} <= {s["fact"] for s in d["same"]}  # every module's weights, every path
    assert any("single-agent probes" in n and "skipped for multi-agent" in n for n in d["notes"])
    assert "1. path `swapped` maps agents" in result.stdout


def test_diagnose_names_a_recurrent_state_carried_over_between_episodes_with_its_proof(zoo, tmp_path, capsys):
    """LSTM modules (the zoo's multi_agent_lstm): an act-form policy that forgets to start each agent's state
    afresh at an episode's start; the faithful one has no finding."""
    result = in_process(capsys, "diagnose", zoo / "multi_agent_lstm", "--path", f"rec={LOOPS}:make_recurrent_policy",
                        "--path", f"stale={LOOPS}:make_carried_over_policy", "--paths", "connectors,rec,stale",
                        "--episodes", "3", "--json", tmp_path / "d.json")
    assert result.returncode == 0, result.stderr[-3000:]
    d = json.loads((tmp_path / "d.json").read_text())
    assert [f["paths"] for f in d["findings"]] == [["connectors", "stale"]]
    finding = d["findings"][0]
    assert "`stale` carries a state over from one episode into the next" in finding["cause"]
    length = d["replay"]["paths"]["stale"]["length"]
    assert f"proof: built afresh (its factory called again), `stale` sends `connectors`'s actions at every one " \
           f"of its {length} steps of seed {d['seed']}; as it ran after the batch's episodes, they part at step " \
           f"{finding['step']}" in finding["evidence"]
    assert finding["step"] is not None and "get_initial_state()" in finding["fix"]


@pytest.mark.parametrize("args, cause, evidence", [
    (["--vs", "{zoo}/multi_agent_baseline"], "module weights differ between paths", "tensor(s) differ from the "
                                                                                     "checkpoint, max abs diff"),
    (["--vs-env-config", '{"num_agents": 2}'], "the env differs between paths (env_config)",
     'connectors: {"num_agents": 3}; connectors@vs-env: {"num_agents": 2}'),
])
def test_diagnose_a_baseline_or_a_second_env_names_what_differs(zoo, tmp_path, capsys, args, cause, evidence):
    result = in_process(capsys, "diagnose", zoo / "multi_agent", *[a.replace("{zoo}", str(zoo)) for a in args],
                        "--episodes", "2", "--json", tmp_path / "d.json")
    assert result.returncode == 0, result.stderr[-3000:]
    first = json.loads((tmp_path / "d.json").read_text())["findings"][0]
    assert first["cause"] == cause and evidence in first["evidence"]
