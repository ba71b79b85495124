"""Multi-agent checkpoints on a local Ray (`--workers 2`, loopback): `connectors` in two worker actors,
`evaluate` on two remote MultiAgentEnvRunners fed by the seed dispenser. One run of a few seeds on RLlib's
MultiAgentCartPole (the zoo's checkpoint with a per-agent MeanStdFilter, frozen: remote runners must normalise
with the checkpoint's statistics from their first episode on, and again once restarted), whose world hangs
on one seed: every seed recorded once per path, the frozen one invalid on both and its worker replaced, every
other seed's per-module returns identical."""

from __future__ import annotations

from collections import Counter

from tests.support import multi_agent_fault_envs as envs
from tests.support.engines import finish, plan_for
from tui_eval.records import PathFailed
from tui_eval.session import start_engine

SEEDS = range(6)


def test_two_workers_per_path_give_identical_module_returns_and_a_frozen_world_is_one_invalid_episode(
        zoo, tmp_path):  # noqa: F811
    engine = start_engine(plan_for(
        zoo / "multi_agent_filter", "--freeze-filters",
        "--env", f"tests.support.multi_agent_fault_envs:{envs.FREEZING}", "--env-config", '{"num_agents": 3}',
        "--seeds", f"{SEEDS.start}:{SEEDS.stop}", "--explore", "evaluate=off",
        "--workers", "2", "--num-envs", "2", "--step-timeout", "1", log=tmp_path / "run.sqlite"))
    failures: list[PathFailed] = []
    engine.subscribe(lambda event: failures.append(event) if isinstance(event, PathFailed) else None)
    records = finish(engine, timeout=240)
    assert "2 remote evaluation EnvRunners" in engine.paths["evaluate"].description
    assert "in 2 Ray actors" in engine.paths["connectors"].description
    ran = {}
    for path in ("evaluate", "connectors"):
        counts = Counter(r.seed for r in records if r.path == path)
        assert sorted(counts) == list(SEEDS) and set(counts.values()) == {1}, (path, counts)
        ran[path] = {r.seed: r for r in records if r.path == path}
        assert [s for s, r in ran[path].items() if r.invalid] == [envs.FREEZE_SEED]
        assert "--step-timeout 1s" in (ran[path][envs.FREEZE_SEED].reason or "")
    valid = [s for s in SEEDS if s != envs.FREEZE_SEED]
    for seed in valid:
        evaluate, connectors = ran["evaluate"][seed], ran["connectors"][seed]
        assert [m for m, _, _ in evaluate.modules] == ["p0", "p1"]
        assert evaluate.modules == connectors.modules and evaluate.ret == connectors.ret
        assert evaluate.ret == sum(r for _, r, _ in evaluate.modules)
    froze = sorted(f.path for f in failures if "froze" in f.message and not f.gave_up)
    assert froze == ["connectors", "evaluate"], [f.message for f in failures]
