"""A kind's paths come from one catalog: names, builders, default explore and where that default comes from;
`--path`, `--vs` and `--vs-env` add entries to it (planned offline here: nothing is built)."""

from __future__ import annotations

import pytest

from tests.support.common import ASSETS, CARTPOLE
from tests.support.engines import plan_for
from tui_eval.errors import BadInput


def test_rllib_declares_its_paths_with_where_their_explore_default_comes_from(tmp_path):
    kind = plan_for(CARTPOLE, "--episodes", "2", log=tmp_path / "run.sqlite").kind
    assert kind.path_names == kind.own_path_names == ("evaluate", "connectors")
    assert "evaluation_config.explore" in kind.explore_source("evaluate")
    assert "forward_inference" in kind.explore_source("connectors")
    assert kind.scales_itself("evaluate") and not kind.scales_itself("connectors")
    assert kind.num_envs("connectors")[1] == "tui-eval default"


def test_an_unknown_path_is_one_line_naming_the_kinds_paths(tmp_path):
    kind = plan_for(CARTPOLE, "--episodes", "2", log=tmp_path / "run.sqlite").kind
    with pytest.raises(BadInput, match=r"path 'jit' is not a rllib path; choose from: evaluate, connectors"):
        kind.build_path("jit", False)


def test_vs_env_entries_build_from_the_other_envs_kind_not_the_checkpoints(tmp_path):
    plan = plan_for(CARTPOLE, "--episodes", "2", "--vs-env", "CartPole-v1", "--vs-env-config",
                    '{"max_episode_steps": 100}', log=tmp_path / "run.sqlite")
    kind, other = plan.kind, plan.kind.vs_env_kind
    assert other is not None and other is not kind
    assert kind.path_names == ("evaluate", "connectors", "evaluate@vs-env", "connectors@vs-env")
    assert other.path_names == ("evaluate", "connectors")  # the copy's own catalog, nothing added to it
    assert other.env.env_config == {"max_episode_steps": 100} and kind.env.env_config == {}
    assert plan.explore_source["connectors@vs-env"] == plan.explore_source["connectors"]


def test_rsl_rl_declares_three_deterministic_paths(tmp_path):
    plan = plan_for(ASSETS / "rsl_pointgoal" / "model_39.pt", "--episodes", "2", log=tmp_path / "run.sqlite")
    assert plan.kind.path_names == ("runner", "jit", "onnx")
    assert plan.explore == {"runner": False, "jit": False}
    assert plan.explore_source["runner"] == "library default: rsl_rl's get_inference_policy() (the deterministic mean)"
