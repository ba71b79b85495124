"""Conformance matrix of the `connectors` path against real Algorithm.evaluate(): one tiny real checkpoint per
connector piece, space and module kind (trained once per session by tests/support/zoo_connectors.py); with explore
off both paths give the same return on every seed."""

from __future__ import annotations

import pytest

from tests.support.engines import by_seed, plan_for, run_to_end

SEEDS = ("--seeds", "40:46", "--episodes", "6", "--num-envs", "3")
#: checkpoint -> what the connectors path must say about its pipelines
MATRIX = {
    "lstm": "stock pipelines fused",  # the stock state pieces of a recurrent module
    "prev_ap_lstm": "non-stock connector PrevActionsPrevRewards",  # + FlattenObservations
    "framestack": "non-stock connector FrameStacking",  # FrameStackingEnvToModule, a CNN
    "framestack_lstm": "non-stock connector FrameStacking",  # the same, a CNN + LSTM: its batch gets a time rank
    "user_connector": "non-stock connector ScaleObservations",  # MultiDiscrete actions
    "tuple_obs_dict_act": "non-stock connector FlattenObservations",  # Tuple with MultiDiscrete; Dict actions
    "multibinary_obs_tuple_act": "non-stock connector FlattenObservations",  # Tuple actions
    "dict_obs_lstm": "non-stock connector FlattenObservations",  # env's own key order, a MultiBinary part
    "user_module_to_env": "non-stock connector InvertActions",  # the user's own module-to-env piece
    "meanstd_lstm": "non-stock connector MeanStdFilter",  # updating, from the checkpoint's statistics on both
}


@pytest.mark.parametrize("name", list(MATRIX))
def test_explore_off_gives_the_same_return_per_seed_on_both_paths(connector_zoo, name, tmp_path):
    engine, records = run_to_end(connector_zoo / name, *SEEDS, "--explore", "evaluate=off", "--explore",
                                 "connectors=off",
                                 log=tmp_path / "run.sqlite")
    assert MATRIX[name] in engine.paths["connectors"].description
    evaluate, connectors = by_seed(records, "evaluate"), by_seed(records, "connectors")
    assert sorted(evaluate) == list(range(40, 46)), records
    assert connectors == evaluate
    assert not any(r.invalid for r in records)
    if name == "user_module_to_env":  # its InvertActions took: the module's own pick drops the pole in ~9 steps
        assert min(connectors.values()) > 20, connectors


def test_a_checkpoint_that_cannot_match_per_seed_runs_every_seed(connector_zoo, tmp_path):
    """RLlib's CartPoleWithDictObservationSpace + FlattenObservations: its observation holds an unseeded
    np.random draw, so returns are not a function of the seed. Both run every seed."""
    name = "dict_flatten"
    _, records = run_to_end(connector_zoo / name, *SEEDS, "--explore", "evaluate=off", log=tmp_path / "run.sqlite")
    for path in ("evaluate", "connectors"):
        assert sorted(by_seed(records, path)) == list(range(40, 46)), path
    assert not any(r.invalid for r in records)


def test_fused_state_pieces_equal_the_pipelines(connector_zoo, tmp_path):
    """A recurrent module with the stock pipelines: the batched state equals RLlib's pieces, seed by seed.
    Explore on, from the same torch seed: both draw one categorical sample per step from the same logits,
    so a state row off anywhere changes the draws (greedy, this tiny policy pushes one way throughout)."""
    import torch

    results = {}
    for flags in ((), ("--generic-connectors",)):
        torch.manual_seed(7)
        engine, records = run_to_end(connector_zoo / "lstm", "--paths", "connectors", "--seeds", "60:72",
                                     "--episodes", "12", "--num-envs", "5", "--explore", "connectors=on", *flags,
                                     log=tmp_path / f"run{len(flags)}.sqlite")
        assert ("fused" in engine.paths["connectors"].description) == (not flags)
        results[flags] = {r.seed: (r.ret, r.length) for r in records}
    assert sorted(results[()]) == list(range(60, 72))
    assert len(set(results[()].values())) > 3  # the draws make episodes of many lengths
    assert results[()] == results[("--generic-connectors",)]


@pytest.mark.parametrize("name", ["prev_ap_lstm", "tuple_obs_dict_act"])
def test_explore_on_runs_on_both_paths(connector_zoo, name, tmp_path):
    _, records = run_to_end(connector_zoo / name, *SEEDS, "--explore", "evaluate=on", "--explore", "connectors=on",
                                 log=tmp_path / "run.sqlite")
    for path in ("evaluate", "connectors"):
        mine = [r for r in records if r.path == path]
        assert sorted(r.seed for r in mine) == list(range(40, 46)), path
        assert all(r.explore is True and not r.invalid for r in mine)


def _filter_pushes(pipeline) -> list[int]:
    """How many observations each MeanStdFilter of `pipeline` has folded into its statistics."""
    pushes = []
    for piece in pipeline.connectors:
        if type(piece).__name__ == "MeanStdFilter":
            for agent in piece.get_state().values():  # one RunningStat state per observation component
                pushes += [stat["num_pushes"] for stat in agent["running_stats"]]
    return pushes


def test_mean_std_filter_updating_or_frozen_gives_the_same_returns_per_seed_on_both_paths(connector_zoo, tmp_path):
    """A policy whose pushes hang on the filter's output (tests/support/zoo_connectors.py `_balance`): updating (the
    library default) and frozen at the checkpoint's statistics (--freeze-filters, as deployed) give other
    returns, and each is identical seed by seed on both paths; a frozen filter folds in no observation."""
    from ray.rllib.connectors.env_to_module import EnvToModulePipeline

    saved = _filter_pushes(EnvToModulePipeline.from_checkpoint(str(connector_zoo / "meanstd" / "env_runner" /
                                                                   "env_to_module_connector")))
    assert saved and min(saved) > 0
    results = {}
    for flags in ((), ("--freeze-filters",)):
        engine, records = run_to_end(connector_zoo / "meanstd", *SEEDS, "--explore", "evaluate=off", *flags,
                                     log=tmp_path / f"run{len(flags)}.sqlite")
        evaluate, connectors = by_seed(records, "evaluate"), by_seed(records, "connectors")
        assert sorted(evaluate) == list(range(40, 46)) and connectors == evaluate, flags
        assert len(set(evaluate.values())) > 2  # the policy reacts to what the filter makes of each observation
        facts = plan_for(connector_zoo / "meanstd", *SEEDS, *flags, log=tmp_path / f"plan{len(flags)}.sqlite").facts
        assert ("frozen at the checkpoint's statistics" in facts["filters"]) == bool(flags), facts
        pushes = _filter_pushes(engine.paths["connectors"].env_to_module)
        assert (pushes == saved) == bool(flags), (pushes, saved)
        results[flags] = evaluate
    assert results[()] != results[("--freeze-filters",)]
