"""Every Ray piece of a run can die: a real multi-node cluster on this machine (loopback only), as Ray's own
fault-tolerance tests build one (`ray.cluster_utils.Cluster`: a head and two worker nodes, few CPUs each).

One cluster serves this module and test_join_checks.py (conftest.py). The head has no CPU, so every actor
(PathWorkers, evaluation EnvRunners) runs on a worker node and the seed dispenser (no CPU, pinned to the
driver's node) on the head. Each case kills one piece mid-run and ends with every seed recorded exactly once
per path, the run finished, its status true; the cluster is left as found (a removed node replaced).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter

from tests.support.cluster_envs import NODE_CPUS
from tests.support.common import CARTPOLE, ROOT, cli, episodes_in, wait_until
from tests.support.engines import by_seed, plan_for
from tui_eval.records import PathFailed, PathNotice
from tui_eval.session import start_engine


def _once_each(records, path: str, seeds: range) -> None:
    counts = Counter(r.seed for r in records if r.path == path)
    assert sorted(counts) == list(seeds), f"{path}: seeds missing or extra: {sorted(set(seeds) ^ set(counts))}"
    assert set(counts.values()) == {1}, f"{path}: a seed recorded twice: {counts.most_common(3)}"


def _engine(cluster, tmp_path, *args: str):
    engine = start_engine(plan_for(CARTPOLE, "--ray-address", cluster.address, "--workers", "2", "--num-envs", "2",
                                   *args, log=tmp_path / "run.sqlite"))
    events: list = []
    engine.subscribe(lambda e: events.append(e) if isinstance(e, (PathFailed, PathNotice)) else None)
    return engine, events


def _run_killing(engine, kill, after: int = 3, timeout: float = 120) -> None:
    engine.start()
    try:
        wait_until(lambda: engine.log.count() >= after, timeout=60)
        kill()
        assert engine.wait(timeout), "the run did not finish"
    finally:
        engine.close()
    assert engine.state == "done" and not engine.stop_requested
    assert not [e for e in engine.errors if e.gave_up]


def _pid(where: str) -> int:
    return int(where.rsplit(" pid ", 1)[1])


def test_a_killed_path_worker_runner_and_seed_dispenser_are_replaced_and_the_verdict_holds(cluster, tmp_path):
    engine, events = _engine(cluster, tmp_path, "--seeds", "0:30", "--explore", "evaluate=off")
    worker = engine.paths["connectors"]._slots[0].info["pid"]
    runner = _pid(engine.paths["evaluate"].placement[0])
    pump = engine.paths["evaluate"].pump
    dispenser = pump.pid
    import ray

    # the pid as Ray's own state knows it (the GCS actor table), not only as the actor said
    assert worker in {a["Pid"] for a in ray._private.state.actors().values() if a["State"] == "ALIVE"}

    def kill_all_three():
        for pid in (worker, runner):
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: any("EnvRunner 1" in e.message for e in events), timeout=60)
        os.kill(dispenser, signal.SIGKILL)

    _run_killing(engine, kill_all_three)
    records = engine.log.records()
    _once_each(records, "evaluate", range(30))
    _once_each(records, "connectors", range(30))
    assert by_seed(records, "evaluate") == by_seed(records, "connectors")  # deterministic: the same returns
    assert engine.stats.comparison_summary().verdict != "differ"
    failed = [(e.path, e.message) for e in events if isinstance(e, PathFailed)]
    assert len(failed) == 3, failed
    assert any(p == "connectors" and str(worker) in m and "died" in m for p, m in failed), failed
    assert any(p == "evaluate" and "evaluation EnvRunner 1" in m and str(runner) in m and "died" in m
               for p, m in failed), failed
    assert any(p == "evaluate" and f"seed dispenser (pid {dispenser}) died" in m for p, m in failed), failed
    assert pump.restarts == 1 and pump.pid != dispenser
    back = [e.message for e in events if isinstance(e, PathNotice)]
    assert any("evaluation EnvRunner 1 is back" in m for m in back), back


def test_a_node_that_leaves_moves_its_work_and_a_full_cluster_says_so_and_waits(cluster, tmp_path, monkeypatch):
    from tui_eval.cluster import remote_path
    from tui_eval.integrations.rllib.paths import eval_runners

    monkeypatch.setattr(remote_path, "NO_ROOM_S", 1.0)  # say it soon: the run is short
    monkeypatch.setattr(eval_runners, "NO_ROOM_S", 1.0)
    engine, events = _engine(cluster, tmp_path, "--seeds", "0:40", "--explore", "evaluate=off")
    node_id = engine.paths["connectors"]._slots[0].info["node"]
    leaving = next(n for n in cluster.worker_nodes if n.node_id == node_id)

    def remove_then_add_when_waiting():
        cluster.remove_node(leaving)
        # every node was full (4 actors, 4 CPUs): the leaving node's actors have nowhere to go
        wait_until(lambda: any(isinstance(e, PathNotice) and "room" in e.message for e in events), timeout=60)
        cluster.add_node(num_cpus=NODE_CPUS)  # room again: the waiting actors are placed

    _run_killing(engine, remove_then_add_when_waiting, timeout=180)
    records = engine.log.records()
    _once_each(records, "connectors", range(40))
    _once_each(records, "evaluate", range(40))
    assert by_seed(records, "evaluate") == by_seed(records, "connectors")
    lost = [e for e in events if isinstance(e, PathFailed)]
    assert lost and all("died" in e.message for e in lost)


def test_a_hung_step_in_an_actor_or_runner_is_invalid_and_it_is_replaced_and_logged(cluster, tmp_path):
    log = tmp_path / "hung.sqlite"
    done = cli(CARTPOLE, "--headless", "--env", "tests.support.fault_envs:FreezingCartPole-v0",
               "--explore", "evaluate=off", "--step-timeout", "2", "--seeds", "1:6", "--num-envs", "2",
               "--workers", "2",
               "--ray-address", cluster.address, "--log", log, cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    from tui_eval.log.store import RunLog

    records = RunLog(log, readonly=True).records()
    for path in ("connectors", "evaluate"):
        _once_each(records, path, range(1, 6))
        invalid = {r.seed: r.reason for r in records if r.invalid and r.path == path}
        assert set(invalid) == {3} and all("--step-timeout 2s" in why for why in invalid.values()), invalid
    assert by_seed(records, "evaluate") == by_seed(records, "connectors")
    assert "froze" in done.stderr  # the headless line says so as it happens
    shown = cli("attach", log, "--headless", cwd=tmp_path)
    assert shown.returncode == 0 and "(done)" in shown.stdout
    froze = [line for line in shown.stdout.splitlines() if "froze" in line and "(failed, restart" in line]
    assert len(froze) == 2 and all("seed 3" in f for f in froze), shown.stdout  # one per path


def test_a_killed_driver_resumes_on_the_same_cluster_and_leaves_no_actor_behind(cluster, tmp_path):
    from ray.util import list_named_actors

    from tui_eval.log.store import RunLog
    from tui_eval.paths.ray_names import run_prefix

    log = tmp_path / "killed.sqlite"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    driver = subprocess.Popen(
        [sys.executable, "-m", "tui_eval.cli", str(CARTPOLE), "--headless", "--paths", "connectors", "--seeds", "0:40",
         "--num-envs", "2", "--workers", "2", "--ray-address", cluster.address, "--log", str(log)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: episodes_in(log) >= 4, timeout=180)  # the writer may not have made its tables yet
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait(30)
    assert RunLog(log, readonly=True).count() < 40  # killed mid-run
    done = cli("resume", log, "--headless", cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    meta, records = RunLog(log, readonly=True).meta(), RunLog(log, readonly=True).records()
    assert meta["status"] == "done"
    _once_each(records, "connectors", range(40))

    def none_left() -> bool:
        return not [a for a in list_named_actors(all_namespaces=True) if a["name"].startswith(run_prefix(log.stem))]

    wait_until(none_left, timeout=30)  # the resumed run ended its own; the killed one's were ended too
    wait_until(lambda: time.sleep(0.2) or _cpus_free() == 2 * NODE_CPUS, timeout=60)


def _cpus_free() -> float:
    import ray

    return ray.available_resources().get("CPU", 0)
