"""The algorithm conformance matrix: a tiny real checkpoint per new-API-stack algorithm
(tests/support/zoo_checkpoints.py), both RLlib paths on the same seeds; checkpoint features a path cannot
replicate are refused before any episode; a path given up mid-run voids the comparison."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.engines import EVALUATE_DEFAULT, by_seed, plan_for, run_to_end
from tests.support.zoo_checkpoints import ALGORITHMS, OFFLINE
from tui_eval.log.store import RunLog
from tui_eval.stats.guards import returns_identical
from tui_eval.views.format import summary_table


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_explore_off_both_paths_give_identical_returns_seed_by_seed(zoo, algorithm, tmp_path):
    engine, records = run_to_end(zoo / algorithm, "--episodes", "5", "--explore", "evaluate=off",
                                 log=tmp_path / "run.sqlite")
    evaluate, connectors = by_seed(records, "evaluate"), by_seed(records, "connectors")
    # identical as the comparison means it: equal up to 2 float32 ulps (a continuous-action return summed over
    # 200 steps in float64 may part in its last digits with the batch's size, on some CPUs)
    assert len(evaluate) == 5 and evaluate.keys() == connectors.keys(), (evaluate, connectors)
    assert all(returns_identical(evaluate[s], connectors[s]) for s in evaluate), (evaluate, connectors)
    assert not any(r.invalid for r in records) and all(r.explore is False for r in records)
    comparison = engine.stats.comparison.summary()
    assert comparison.exact is True and comparison.verdict != "differ"


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_explore_on_both_paths_run_and_show_where_explore_comes_from(zoo, algorithm, tmp_path):
    plan = plan_for(zoo / algorithm, "--episodes", "2", "--explore", "connectors=on", log=tmp_path / "run.sqlite")
    assert plan.explore == {"evaluate": True, "connectors": True}
    assert plan.explore_source == {"evaluate": EVALUATE_DEFAULT, "connectors": "--explore"}
    assert plan.facts["algorithm"] == ALGORITHMS[algorithm]().algo_class.__name__
    engine, records = run_to_end(zoo / algorithm, "--episodes", "2", "--explore", "connectors=on",
                                 log=tmp_path / "run2.sqlite")
    for path in ("evaluate", "connectors"):
        assert len(by_seed(records, path)) == 2
    assert all(r.explore is True for r in records) and not any(r.invalid for r in records)
    assert engine.stats.comparison.summary().exact is False  # sampled actions: a statistical comparison


@pytest.mark.parametrize("name, extra, needles", [
    ("custom_evaluation", [], ["custom_evaluation_function (own_evaluation)", "path evaluate",
                               "run --paths connectors"]),
    ("custom_env_runner", [], ["env_runner_cls=OwnEnvRunner", "path connectors", "run --paths evaluate"]),
])
def test_a_feature_a_path_cannot_replicate_is_refused_before_any_episode(zoo, name, extra, needles, run_dir,
                                                                           capsys):
    result = in_process(capsys, zoo / name, "--headless", "--episodes", "2", *extra)
    assert_one_line_error(result, *needles)
    for log in run_dir.glob("tui-eval-runs/*.sqlite"):  # refused before any episode ran
        assert RunLog(log, readonly=True).records() == []


@pytest.mark.parametrize("algorithm", list(OFFLINE))
def test_offline_algorithms_run_both_paths_identically_from_their_evaluation_runner(zoo, algorithm, tmp_path):
    # BC and MARWIL keep no env_runner/, only eval_env_runner/ (their evaluation config's runner); CQL keeps both
    assert (zoo / algorithm / "eval_env_runner").is_dir()
    assert (zoo / algorithm / "env_runner").exists() == (algorithm == "cql")
    # the training dataset the config names is not needed to evaluate (nor read: Ray Data never starts)
    dataset = zoo / "rows_CartPole-v1"
    away = dataset.rename(tmp_path / "dataset_elsewhere")
    try:
        _, records = run_to_end(zoo / algorithm, "--episodes", "3", "--num-envs", "2", "--explore", "evaluate=off",
                                log=tmp_path / "run.sqlite")
    finally:
        away.rename(dataset)
    evaluate, connectors = by_seed(records, "evaluate"), by_seed(records, "connectors")
    assert len(evaluate) == 3 and evaluate == connectors, (evaluate, connectors)


def test_a_checkpoint_saved_without_any_env_runner_is_refused(zoo, tmp_path, run_dir, capsys):
    # an offline algorithm trained without an evaluation config saves neither runner
    offline = tmp_path / "offline"
    shutil.copytree(zoo / "bc", offline)
    shutil.rmtree(offline / "eval_env_runner")
    result = in_process(capsys, offline, "--headless", "--episodes", "2")
    assert_one_line_error(result, "BC checkpoint has neither env_runner/ nor eval_env_runner/",
                          "evaluation_interval=1")


def test_the_path_the_refusal_names_runs(zoo, tmp_path):
    _, records = run_to_end(zoo / "custom_env_runner", "--paths", "evaluate", "--episodes", "2",
                            log=tmp_path / "run.sqlite")
    assert len(by_seed(records, "evaluate")) == 2


def test_a_path_given_up_mid_run_voids_the_comparison(zoo, tmp_path, capsys):
    from tests.support import policy_fault_envs  # noqa: F401  (registers the env)

    # the first seeds finish on both paths (identical: explore off; evaluate reports those of its first
    # evaluate() call, 50 steps); seed BREAK_SEED breaks the vector env on both
    result = in_process(capsys, zoo / "ppo", "--headless",
                        "--env", "tests.support.policy_fault_envs:ReshapingCartPole-v0",
                        "--seeds", "0:12", "--num-envs", "1", "--explore", "evaluate=off",
                        "--json", tmp_path / "s.json", "--log", tmp_path / "run.sqlite")
    assert result.returncode == 4, result.stderr[-3000:]
    summary = json.loads((tmp_path / "s.json").read_text())
    paired = {e["seed"] for e in summary["episodes"] if e["path"] == "evaluate"} & \
             {e["seed"] for e in summary["episodes"] if e["path"] == "connectors"}
    assert len(paired) >= 3  # enough for a verdict, were it not void
    comparison = summary["comparison"]
    assert comparison["verdict"] == "void" and comparison["exact"] is None and comparison["diff_mean"] is None
    assert "failed and was given up" in comparison["void"]
    table = summary_table(summary)  # what the headless run prints (its stdout is bound before capsys)
    assert "verdict: VOID" in table
    for word in ("IDENTICAL", "identical on", "EQUIVALENT", "DIFFER", "UNDECIDED"):
        assert word not in table, table
