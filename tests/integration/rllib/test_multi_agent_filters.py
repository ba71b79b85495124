"""`--freeze-filters` on a multi-agent checkpoint with RLlib's MeanStdFilter(multi_agent=True) (one filter per
agent, as RLlib's mean_std_filtering example sets it up; the zoo's `multi_agent_filter`): both paths normalise
every agent's observations with that agent's statistics from the checkpoint, left as saved, and give the same
per-module returns seed by seed with explore off."""

from __future__ import annotations

import pickle

from tests.support.engines import run_to_end
from tui_eval.integrations.rllib.paths.layout import connector_dir


def _filter_state(pipeline) -> dict:
    from ray.rllib.connectors.env_to_module import MeanStdFilter

    [piece] = [c for c in pipeline.connectors if isinstance(c, MeanStdFilter)]
    return piece.get_state()


def _stats(state: dict) -> dict:
    """Per agent: each running statistic's count, mean and spread (what normalising reads)."""
    return {agent: [(s["num_pushes"], s["mean_array"], s["sum_sq_diff_array"]) for s in part["running_stats"]]
            for agent, part in state.items()}


def test_frozen_per_agent_filters_keep_the_checkpoints_statistics_and_both_paths_match(zoo, tmp_path):  # noqa: F811
    checkpoint = zoo / "multi_agent_filter"
    saved = pickle.loads((connector_dir(checkpoint, "env_to_module") / "MeanStdFilter" / "state.pkl").read_bytes())
    assert sorted(saved) == [0, 1, 2]  # one filter per agent
    engine, records = run_to_end(checkpoint, "--freeze-filters", "--seeds", "0:4", "--explore", "evaluate=off",
                                 "--num-envs", "2", log=tmp_path / "run.sqlite")
    evaluate = {r.seed: r.modules for r in records if r.path == "evaluate" and not r.invalid}
    connectors = {r.seed: r.modules for r in records if r.path == "connectors" and not r.invalid}
    assert sorted(evaluate) == [0, 1, 2, 3] and evaluate == connectors
    runner = engine.paths["evaluate"].algo.eval_env_runner
    for pipeline in (runner._env_to_module, engine.paths["connectors"].env_to_module):
        assert _stats(_filter_state(pipeline)) == _stats(saved)  # as saved: nothing was added while evaluating
    assert all("1 filter(s) frozen at the checkpoint's statistics" in p.description for p in engine.paths.values())
