"""`--path NAME=MODULE:FACTORY` on a multi-agent checkpoint: a user's own loops and policy in a user module
(tests/support/user_project/my_marl_loop.py) on the zoo's MultiAgentCartPole checkpoint. Returns are measured by
tui-eval per module with the checkpoint's policy_mapping_fn: a faithful loop and act-form policy equal
`connectors` module by module, seed by seed; a loop mapping agents to the wrong module acts otherwise; one
that acts for a finished agent gets invalid episodes that say so."""

from __future__ import annotations

import json

from tests.support.bad_input import in_process
from tests.support.common import SUPPORT

LOOPS = SUPPORT / "user_project" / "my_marl_loop.py"
CUSTOM = {"loop": "make_loop", "policy": "make_policy", "swapped": "make_swapped_loop", "naive": "make_naive_loop"}


def _per_module(episodes: list[dict], path: str) -> dict[int, dict]:
    return {e["seed"]: e["modules"] for e in episodes if e["path"] == path}


def test_user_loops_on_a_multi_agent_env_are_measured_per_module_as_the_built_in_paths(zoo, tmp_path, capsys):
    paths = [arg for name, factory in CUSTOM.items() for arg in ("--path", f"{name}={LOOPS}:{factory}")]
    result = in_process(capsys, zoo / "multi_agent", "--headless", *paths, "--paths", ",".join(["connectors", *CUSTOM]),
                        "--episodes", "3", "--json", tmp_path / "s.json", "--log", tmp_path / "run.sqlite")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((tmp_path / "s.json").read_text())
    episodes = summary["episodes"]
    connectors = _per_module(episodes, "connectors")
    assert len(connectors) == 3
    assert _per_module(episodes, "loop") == connectors and _per_module(episodes, "policy") == connectors
    assert summary["modules"]["p0"]["comparison"]["exact"] is True  # connectors vs loop, module p0
    swapped = [e for e in episodes if e["path"] == "swapped"]
    assert len(swapped) == 3 and not any(e["invalid"] for e in swapped)
    assert all(e["modules"] != connectors[e["seed"]] for e in swapped)  # p1 drives agents 0 and 2
    for e in [e for e in episodes if e["path"] in CUSTOM]:
        assert list(e["modules"]) == ["p0", "p1"] and e["return"] == sum(m["return"] for m in e["modules"].values())
    naive = [e for e in episodes if e["path"] == "naive"]
    assert len(naive) == 3 and all(e["invalid"] and "after that agent's episode ended" in e["reason"] for e in naive)
    assert "on a MultiAgentEnv, one env at a time; team and per-module returns measured by tui-eval" in \
        " ".join(result.stderr.split())
