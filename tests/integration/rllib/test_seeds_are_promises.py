"""A seed means the same episode on every path, or tui-eval says it cannot.

On checkpoints of RLlib's own example scripts (tests/support/example_checkpoints.py) and on envs made to break
the promise (tests/support/fault_envs.py), with explore off on both paths and each path in a process of its own:
an env that draws from process-wide generators follows its seed (identical seed by seed), an env that ignores
its seed gets a statistical comparison, and `DIFFER (exact)` is said only once the differing seed, replayed on
each path alone, gave each its own record again.
"""

from __future__ import annotations

import os
import time

import pytest

from tests.support.common import CARTPOLE, ROOT, wait_until
from tests.support.engines import checks_watched, finish, plan_for, run_to_end, session_alive
from tests.support.jobs import EXAMPLES
from tui_eval.log.lifecycle import RunMeta
from tui_eval.log.store import RunLog
from tui_eval.session import start_engine
from tui_eval.views.summary import replay

EXPLORE_OFF = ("--explore", "evaluate=off")


@pytest.fixture(scope="module")
def examples(prefetcher, tmp_path_factory):
    proc, out = prefetcher.wait(EXAMPLES, tmp_path_factory.mktemp("examples"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def identical_seed_by_seed(records, a: str, b: str) -> tuple[int, int]:
    """(seeds both paths ran, of which identical in return and length)."""
    ra = {r.seed: (r.ret, r.length) for r in records if r.path == a}
    rb = {r.seed: (r.ret, r.length) for r in records if r.path == b}
    both = set(ra) & set(rb)
    return len(both), sum(ra[s] == rb[s] for s in both)


def test_rllibs_simple_corridor_draws_from_random_and_is_identical_seed_by_seed(examples, tmp_path):
    """`SimpleCorridor` seeds Python's `random` in reset and draws from it at the goal; 8 sub-envs of a vector
    and two paths used to share that one stream (0/30 seeds identical)."""
    log = tmp_path / "run.sqlite"
    engine, records = run_to_end(examples / "corridor", *EXPLORE_OFF, "--episodes", "24", log=log,
                                 own_processes=True)
    facts = RunMeta.read(RunLog(log, readonly=True)).facts or {}
    assert "the env draws from random: each env keeps its own copy" in facts["env randomness"]
    assert facts["processes"] == "evaluate in this process, connectors each in a process of its own"
    assert "in a process of its own (pid" in engine.paths["connectors"].description
    assert identical_seed_by_seed(records, "evaluate", "connectors") == (24, 24)
    summary = engine.stats.comparison.summary()
    assert summary.exact and summary.differing == 0 and summary.verdict != "differ"


def test_rllibs_action_mask_env_ignores_its_seed_and_is_never_compared_exactly(examples, tmp_path):
    """`ActionMaskEnv` is a RandomEnv: its spaces sample from generators no seed reaches. The probe plays
    actions the mask allows (random ones make the env raise) and finds it; the comparison is statistical."""
    log = tmp_path / "run.sqlite"
    # 6 seeds: the verdict is statistical from the plan on (not a function of how many), and an env that ignores
    # its seed is not identical on 6 seeds in a row
    plan = plan_for(examples / "action_mask", *EXPLORE_OFF, "--episodes", "6", log=log)
    assert plan.repeatable_seeds is False and "not a function of its reset seed" in plan.facts["env seeding"]
    engine = start_engine(plan)  # the plan the probe made is the one the run follows
    records = finish(engine)
    live = engine.stats.comparison.summary()
    assert not live.exact and live.verdict != "differ"
    assert identical_seed_by_seed(records, "evaluate", "connectors")[1] < 6  # the env really differs per run
    back = replay(RunLog(log, readonly=True).meta(), RunLog(log, readonly=True).records()).comparison.summary()
    assert not back.exact and back.verdict == live.verdict


def test_a_planted_difference_is_differ_exact_with_its_proof(tmp_path):
    """A path that always pushes left differs from the checkpoint's policy for real: its first differing seed,
    replayed on each path alone in a fresh process, gives each its own return again."""
    log = tmp_path / "run.sqlite"
    engine, _ = run_to_end(CARTPOLE, "--path", f"left={ROOT / 'tests/support/planted_paths.py'}:always_left",
                           "--paths", "connectors,left", "--episodes", "4", log=log, own_processes=True)
    summary = engine.stats.comparison.summary()
    assert summary.exact and summary.verdict == "differ" and summary.proof == "proven"
    assert "each path alone gave its own return again" in engine.proof.line and summary.same_policy is False
    meta = RunLog(log, readonly=True).meta()
    assert meta["exact_proof"]["state"] == "proven" and meta["exact_proof"]["seed"] == summary.first_difference.seed
    back = replay(meta, RunLog(log, readonly=True).records()).comparison.summary()
    assert back.exact and back.verdict == "differ"


def test_a_difference_that_does_not_replay_alone_makes_the_comparison_statistical(tmp_path):
    """`DriftingCartPole` repeats itself for the probe's few episodes, then drifts with the process's history: the
    two paths' processes drift at other seeds, and the differing seed replayed alone gives another return."""
    log = tmp_path / "run.sqlite"
    engine = start_engine(plan_for(CARTPOLE, "--env", "tests.support.fault_envs:DriftingCartPole-v0", *EXPLORE_OFF,
                                   "--episodes", "12", "--num-envs", "2", log=log, own_processes=True))
    with checks_watched(engine) as checks:
        records = finish(engine)
    # the check's process built `evaluate` on the run's Ray (no Ray of its own: no child process), and nothing of it
    # outlives the check
    assert list(checks.children.values()) == [0]
    assert wait_until(lambda: not any(session_alive(pid) for pid in checks.children), timeout=10)
    plan_said = RunMeta.read(RunLog(log, readonly=True)).facts["env seeding"]
    assert plan_said.startswith("repeats itself")  # the probe could not see it
    summary = engine.stats.comparison.summary()
    assert engine.proof.state == "refuted" and "not repeatable from its seed" in engine.proof.line
    assert not summary.exact and summary.verdict != "differ" and summary.proof == "refuted"
    back = replay(RunLog(log, readonly=True).meta(), records).comparison.summary()
    assert not back.exact and back.verdict == summary.verdict


def test_a_path_whose_process_crashes_is_loaded_again_and_its_seeds_run_again(tmp_path, monkeypatch):
    """A segfault in a simulator ends the path's process, not the run: the seed runs again in a new process."""
    monkeypatch.setenv("TUI_EVAL_TEST_CRASH_MARK", str(tmp_path / "crashed"))
    events = []
    plan = plan_for(CARTPOLE, "--env", "tests.support.fault_envs:CrashingCartPole-v0", *EXPLORE_OFF,
                    "--episodes", "5", "--num-envs", "2", log=tmp_path / "run.sqlite", own_processes=True)
    engine = start_engine(plan)
    engine.subscribe(events.append)
    first = engine.paths["connectors"].pid
    _forked_from_the_zygote(first)
    records = finish(engine, timeout=240)
    assert (tmp_path / "crashed").exists()
    assert engine.paths["connectors"].pid != first
    failures = [e for e in events if type(e).__name__ == "PathFailed"]
    assert len(failures) == 1 and "killed by SIGSEGV" in failures[0].message and not failures[0].gave_up
    assert sorted(r.seed for r in records if r.path == "connectors") == list(range(1000000000, 1000000005))
    assert identical_seed_by_seed(records, "evaluate", "connectors") == (5, 5)


def _forked_from_the_zygote(pid: int) -> None:
    """A path's process is a child of the zygote (a pristine interpreter), never of the run's process, and leads a
    session of its own."""
    from tui_eval.isolation import forked

    with open(f"/proc/{pid}/stat") as fh:
        parent = int(fh.read().rsplit(")", 1)[1].split()[1])
    assert forked._zygote is not None and parent == forked._zygote.process.pid != os.getpid()
    with open(f"/proc/{parent}/cmdline", "rb") as fh:
        assert b"tui_eval.isolation.zygote" in fh.read()
    assert os.getsid(pid) == pid


def test_a_killed_zygote_is_replaced_and_the_path_still_runs_in_a_process_of_its_own(tmp_path):
    from tui_eval.isolation import forked

    plan = plan_for(CARTPOLE, "--paths", "connectors,evaluate", *EXPLORE_OFF, "--episodes", "3", "--num-envs", "2",
                    log=tmp_path / "run.sqlite", own_processes=True)
    old = forked.zygote(("torch", "gymnasium"))
    old.process.kill()
    old.process.wait(10)
    engine = start_engine(plan)
    records = finish(engine)
    assert forked._zygote is not None and forked._zygote is not old and forked._zygote.alive
    assert "in a process of its own" in engine.paths["connectors"].description
    assert identical_seed_by_seed(records, "evaluate", "connectors") == (3, 3)


def test_stop_is_prompt_while_a_path_process_is_stuck_in_a_step(tmp_path, monkeypatch):
    """A path's process whose simulator hangs is ended by close, within seconds (measured: bench/bench_stop.py;
    the bound here leaves room for a loaded machine)."""
    frozen = tmp_path / "frozen"
    monkeypatch.setenv("TUI_EVAL_TEST_FREEZE_MARK", str(frozen))
    plan = plan_for(CARTPOLE, "--env", "tests.support.fault_envs:FreezingCartPole-v0", "--paths",
                    "connectors,evaluate", *EXPLORE_OFF, "--num-envs", "2", log=tmp_path / "run.sqlite",
                    own_processes=True)
    engine = start_engine(plan)
    path = engine.paths["connectors"]
    try:
        engine.start()
        # the env says when a step froze in the path's process (the watchdog's step timeout is 30 s: it is
        # still stuck when stop comes)
        wait_until(frozen.exists, timeout=120)
        assert path._process.poll() is None
        started = time.monotonic()
        engine.stop()
        engine.close()
        took = time.monotonic() - started
    finally:
        engine.close()
    assert path._process.poll() is not None
    # by design at most ~8 s a stuck path (asked, terminated, killed: tui_eval/isolation/process_path.py), and
    # both paths here freeze on every third seed
    assert took < 30, f"stop took {took:.1f}s with a step stuck"


def test_the_doctor_names_an_env_that_ignores_its_seed_first(examples, tmp_path):
    from tui_eval.doctor.diagnosis import diagnose_plan

    plan = plan_for(examples / "action_mask", *EXPLORE_OFF, "--episodes", "3", log=tmp_path / "run.sqlite")
    diagnosis = diagnose_plan(plan)
    first = diagnosis.findings[0]
    assert first.cause.startswith("the env is not a function of its reset seed")
    assert "not a function of its reset seed" in first.evidence and first.stage == "env"
    # the replays (a Dict observation with an action mask) run; where the batch gave a seed to replay, its
    # divergence is the env finding's proof and no cause is left unexplained
    assert not any("replay of" in n and "failed" in n for n in diagnosis.notes), diagnosis.notes
    assert not any(f.topic == "unexplained" and f.stage in ("obs", "env") for f in diagnosis.findings), diagnosis.text()
    if any(pair["stage"] in ("obs", "env") for pair in diagnosis.replay.get("pairs", [])):
        assert "proof: replayed on seed" in first.evidence
    # one path replayed twice on one seed is the env's own proof, whatever the batch gave
    assert f"proof: `evaluate` replayed twice on seed {diagnosis.seed}: at step 0 the second got other " \
           "observations from the env, before it had acted" in first.evidence


def test_the_probes_rerun_a_policy_on_dict_observations_with_an_action_mask(examples, tmp_path):
    """RLlib's evaluate samples (explore on, its default): asked again on the same Dict observation (an action
    mask and the observation) it answers otherwise, the connectors path does not; that is the explore
    finding's proof, after the env's own finding."""
    from tui_eval.doctor.diagnosis import diagnose_plan

    diagnosis = diagnose_plan(plan_for(examples / "action_mask", "--episodes", "3", log=tmp_path / "run.sqlite"))
    causes = [f.cause for f in diagnosis.findings]
    assert causes[0].startswith("the env is not a function of its reset seed"), causes
    explore = next(f for f in diagnosis.findings if f.topic == "explore")
    assert "proof: asked 4 times for its action on the same observation" in explore.evidence
    assert not any(n.startswith("probe ") for n in diagnosis.notes), diagnosis.notes
