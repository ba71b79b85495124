"""The multi-agent `connectors` path's batched pieces return what RLlib's stock multi-agent pieces return, on
every step of real episodes: the env-to-module tail (per module the rows of its agents, their values, dtypes,
column and module order, `memorized_map_structure`) and the module-to-env pipeline (per sub-env each agent's
actions, actions for the env, logp and state outs, in RLlib's agent order). On the zoo's two-policy
MultiAgentCartPole, its LSTM variant (explore off and on), its MeanStdFilter variant and an env whose agent
joins mid-episode; a planted difference on either side is caught."""

from __future__ import annotations

import pytest

from tests.support.multi_agent_checks import order_differences, run_side_by_side


@pytest.mark.parametrize(("name", "explore"), [("multi_agent", False), ("multi_agent_lstm", False),
                                               ("multi_agent_lstm", True), ("multi_agent_filter", False)])
def test_the_batched_multi_agent_pieces_equal_rllibs_on_every_step(zoo, name, explore):
    both = run_side_by_side(zoo / name, explore, seeds=range(20, 22) if explore else range(20, 23))
    assert both.e2m.compared == both.e2m.calls > 10
    assert both.e2m.found == []
    assert both.m2e.calls > 10
    assert both.m2e.found == []
    # every module acted (agents 0 and 2 map to p0, agent 1 to p1)
    assert all(steps > 0 for r in both.records for _, _, steps in r.modules)


def test_an_agent_that_joins_mid_episode_gets_rllibs_rows_from_its_first_observation_on(zoo):
    from tests.support import multi_agent_fault_envs as envs

    both = run_side_by_side(zoo / "multi_agent", explore=False, env_id=envs.LATE_JOINING,
                            env_config={"num_agents": 3})
    assert envs.LATE_JOINING in both.description
    assert both.e2m.compared == both.e2m.calls > envs.JOIN_AT and both.e2m.found == both.m2e.found == []
    for r in both.records:  # agent 1 (p1) acts from its first observation on
        assert 0 < dict((m, n) for m, _, n in r.modules)["p1"] <= r.length - envs.JOIN_AT


class _Planted:
    """A batched piece with one change to its output (a planted difference); everything else its own."""

    def __init__(self, inner, change) -> None:
        self.inner, self.change = inner, change

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def batched_tail(self, *args):
        return self.change(self.inner.batched_tail(*args))

    def __call__(self, **kwargs):
        return self.change(self.inner(**kwargs))


def _rows_flipped(batch):
    """The observation rows of the first module with two or more of them, in reverse order."""
    for module_batch in (batch or {}).values():
        if len(module_batch["obs"]) > 1:
            module_batch["obs"] = module_batch["obs"].flip(0)
            break
    return batch


def _agents_reversed(out):
    """Each sub-env's actions with its agents in reverse order (the same values)."""
    out["actions"] = [dict(reversed(list(per_env.items()))) for per_env in out["actions"]]
    return out


def test_a_planted_difference_is_caught_on_either_side(zoo):
    both = run_side_by_side(zoo / "multi_agent", explore=False, seeds=[20],
                            plant_e2m=lambda batched: _Planted(batched, _rows_flipped),
                            plant_m2e=lambda fused: _Planted(fused, _agents_reversed))
    assert any(found.startswith("p0:") for found in both.e2m.found), both.e2m.found[:3]
    assert any("key order" in found for found in both.m2e.found), both.m2e.found[:3]


def test_key_order_differences_are_seen_at_any_depth():
    theirs = {"p0": {"obs": [1], "state_in": [2]}, "actions": [{0: 1, 2: 0}, {}]}
    assert order_differences(theirs, theirs) == []
    assert order_differences({"actions": theirs["actions"], "p0": theirs["p0"]}, theirs)
    assert order_differences({**theirs, "p0": {"state_in": [2], "obs": [1]}}, theirs)
    assert order_differences({**theirs, "actions": [{2: 0, 0: 1}, {}]}, theirs)


def test_pipelines_with_other_pieces_run_rllibs_own_pieces(zoo):
    """A piece of another class (a user's subclass of a stock one) or a piece after the stock tail: the
    real pieces run, and the path's description says what is batched."""
    from ray.rllib.connectors.env_to_module import EnvToModulePipeline
    from ray.rllib.connectors.module_to_env import GetActions, ModuleToEnvPipeline

    from tui_eval.integrations.rllib.paths import batched_multi_agent as batched
    from tui_eval.integrations.rllib.paths.layout import connector_dir

    checkpoint = zoo / "multi_agent"
    e2m = EnvToModulePipeline.from_checkpoint(str(connector_dir(checkpoint, "env_to_module")))
    m2e = ModuleToEnvPipeline.from_checkpoint(str(connector_dir(checkpoint, "module_to_env")))
    assert batched.multi_agent_tail_start(e2m) == 0 and batched.why_not_fusable_multi_agent_module_to_env(m2e) is None

    own = type("GetActions", (GetActions,), {"__doc__": "A user's GetActions, under the stock one's name."})
    m2e.connectors[0] = own()
    assert batched.why_not_fusable_multi_agent_module_to_env(m2e) == \
        "module-to-env pieces of other classes than RLlib's"
    e2m.connectors.append(e2m.connectors[0])  # a piece after NumpyToTensor
    assert batched.multi_agent_tail_start(e2m) is None


def test_the_description_says_what_is_batched(zoo):
    from tests.support.multi_agent_checks import rllib_pieces_path
    from tui_eval.config.spec import RunSpec
    from tui_eval.integrations.rllib.kind import RllibKind

    checkpoint = zoo / "multi_agent"
    kind = RllibKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=2))
    batched, own = kind.build_path("connectors", explore=False), rllib_pieces_path(kind, 2)
    try:
        assert "(the stock env-to-module tail and the stock module-to-env pipeline batched per module)" \
            in batched.description
        assert "batched" not in own.description
        assert own.loop.env_to_module is own.env_to_module and own.loop.module_to_env is own.module_to_env
    finally:
        batched.close()
        own.close()


def test_the_loops_forward_is_the_multi_rl_modules_own(zoo):
    """The loop calls each module's inner forward (the modules stay in eval mode): the same outputs as
    MultiRLModule.forward_inference / forward_exploration, for a plain and a recurrent module."""
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModule

    from tui_eval.integrations.rllib.paths.layout import MODULES_DIR
    from tui_eval.integrations.rllib.paths.multi_agent_loop import forward

    for name in ("multi_agent", "multi_agent_lstm"):
        module = RLModule.from_checkpoint(str(zoo / name / MODULES_DIR))
        module.foreach_module(lambda mid, sub: sub.eval())
        stateful = module["p0"].is_stateful()
        obs = torch.rand(3, 1, 4) if stateful else torch.rand(3, 4)
        batch = {"p0": {"obs": obs}, "p1": {"obs": obs[:1]}}
        if stateful:
            for mid, sub in batch.items():
                sub["state_in"] = {k: torch.stack([v] * len(sub["obs"]))
                                   for k, v in module[mid].get_initial_state().items()}
        with torch.no_grad():
            for phase, own in (("inference", module.forward_inference), ("exploration", module.forward_exploration)):
                ours, theirs = forward(module, batch, phase), own(batch)
                assert list(ours) == list(theirs) == ["p0", "p1"]
                for mid in ours:
                    assert list(ours[mid]) == list(theirs[mid])
                    assert all(torch.equal(a, b) for a, b in zip(_leaves(ours[mid]), _leaves(theirs[mid])))


def _leaves(outputs):
    import tree

    return tree.flatten(outputs)
