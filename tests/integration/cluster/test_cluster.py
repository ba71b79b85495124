"""A run spread over Ray (`--workers`): a local Ray with real actors, no mocks. One Ray session serves
the module (ray.init costs seconds here); each test's engine kills its own actors when it closes."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from tests.support.common import CARTPOLE, ROOT, cli, wait_until
from tests.support.engines import (
    assert_resampled_and_explored,
    by_seed,
    finish,
    plan_for,
    resample_then_explore,
    run_to_end,
)
from tui_eval.cli import build_parser, spec_from_args
from tui_eval.envs.seeding import PROBE_SEED
from tui_eval.records import StateChanged
from tui_eval.session import start_engine


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    from tui_eval.local_ray import ensure_ray, stop_ray

    ensure_ray(num_cpus=4)  # two paths x two workers
    yield
    stop_ray()


def _once_each(records, path: str, seeds: range) -> None:
    counts = Counter(r.seed for r in records if r.path == path)
    assert sorted(counts) == list(seeds), f"{path}: seeds missing or extra"
    assert set(counts.values()) == {1}, f"{path}: a seed recorded twice: {counts.most_common(3)}"


def test_two_workers_per_path_run_every_seed_once_with_the_returns_of_one_process(tmp_path, monkeypatch):
    """Both paths spread over Ray (connectors in two PathWorkers, evaluate on two remote evaluation runners):
    every seed once per path, the returns of the connectors path run in this process alone."""
    from ray.util import list_named_actors

    args = ("--seeds", "0:12", "--num-envs", "2")
    _, alone = run_to_end(CARTPOLE, "--paths", "connectors", *args, log=tmp_path / "one.sqlite")
    plan = plan_for(CARTPOLE, *args, "--explore", "evaluate=off", "--workers", "2", log=tmp_path / "run.sqlite")
    # the connectors actors are spawned first and load while this process builds the evaluate path
    workers_when_built: dict[str, list[str]] = {}
    build_here = plan.kind.build_path

    def build_path(name: str, explore: bool):
        workers_when_built[name] = [a for a in list_named_actors() if "worker-connectors" in a]
        return build_here(name, explore)

    monkeypatch.setattr(plan.kind, "build_path", build_path)
    loaded: list[str] = []
    engine = start_engine(plan, on_loaded=lambda name, seconds: loaded.append(name))
    assert list(workers_when_built) == ["evaluate"] and len(workers_when_built["evaluate"]) == 2, workers_when_built
    assert loaded == ["evaluate", "connectors"] and list(engine.paths) == plan.paths
    path = engine.paths["connectors"]
    assert len(path.placement) == 2 and all(" pid " in where for where in path.placement)
    # the actors run this checkout's code, not another installed copy
    assert all(slot.info["package"].startswith(str(ROOT)) for slot in path._slots)
    # a frame view says why the workers' envs show nothing, rather than waiting for frames that never come
    assert "Ray workers" in (engine.frames.view(["connectors"]).panes[0].problem or "")
    records = finish(engine)
    assert len(engine.paths["evaluate"].placement) == 2  # two remote evaluation runners
    _once_each(records, "evaluate", range(12))
    _once_each(records, "connectors", range(12))
    assert by_seed(records, "connectors") == by_seed(alone, "connectors")
    assert by_seed(records, "evaluate") == by_seed(records, "connectors")


def test_no_episode_starts_once_the_pause_is_shown_and_resample_and_explore_reach_the_workers(tmp_path, monkeypatch):
    """One open-ended run on two workers (as the live app runs): pause, resume, then the resample and explore
    controls; each check on the actors of one started path. The actors answer the first pause in time: no episode
    starts once the paused state is shown. Then their answers all come late (after the time the driver waits for
    them, here none), as on a loaded machine: an actor may start a waiting seed before its hold reaches it (the
    paused state is shown meanwhile: docs/long-runs.md), and the seeds it had not started are handed back all the
    same, by the run loop once the answers come; every started episode is recorded, each block's seeds once."""
    import tui_eval.cluster.remote_path as remote_path

    stamps = tmp_path / "resets.txt"
    engine = start_engine(plan_for(
        CARTPOLE, "--paths", "connectors", "--seeds", "0:", "--num-envs", "2", "--workers", "2",
        "--env", "tests.support.cluster_envs:StampedCartPole-v1", "--env-config", f'{{"stamp_file": "{stamps}"}}',
        log=tmp_path / "run.sqlite"))
    engine.episodes = None  # as the live app: until stopped
    try:
        engine.start()
        _pause_shows_at_once_and_holds(engine, stamps, answered_in_time=True)
        monkeypatch.setattr(remote_path, "CONTROL_TIMEOUT_S", 0.0)
        _pause_shows_at_once_and_holds(engine, stamps, answered_in_time=False)
        result = resample_then_explore(engine)
    finally:
        engine.stop()
        engine.wait(60)
        engine.close()
    assert_resampled_and_explored(result)  # each block's seeds once, explore only where turned on


def _pause_shows_at_once_and_holds(engine, stamps, answered_in_time: bool) -> None:
    """Pause a running engine: no episode starts after the paused state is shown (where the actors answer in time),
    every started one is recorded, nothing more while paused; then resume it and see it go on."""
    shown: list[float] = []
    engine.subscribe(lambda e: shown.append(time.time()) if e == StateChanged("paused") else None)
    before = engine.log.count()
    wait_until(lambda: engine.log.count() >= before + 4, timeout=60)
    engine.pause()
    # the paused state is shown by the time pause returns, not once the episodes in flight finish (its
    # latency, target 0.1 s, is measured by bench/bench_ui.py)
    assert len(shown) == 1
    wait_until(lambda: not engine.in_flight(), timeout=90)  # episodes in flight finish and are recorded
    time.sleep(1.0)
    settled = engine.log.count()
    resets = [tuple(map(float, line.split())) for line in stamps.read_text().splitlines()]
    late = [seed for seed, at in resets if at > shown[0]]
    assert not (answered_in_time and late), f"episodes started after the pause was shown: seeds {late}"
    recorded = {r.seed for r in engine.log.records()}
    started_by_the_run = {int(seed) for seed, _ in resets} - {PROBE_SEED, PROBE_SEED + 1}  # less the probe's
    assert recorded == started_by_the_run  # every started episode was recorded
    time.sleep(0.5)
    assert engine.log.count() == settled
    engine.resume()
    wait_until(lambda: engine.log.count() >= settled + 2, timeout=60)


def test_resume_keeps_the_cluster_settings(tmp_path):
    from tui_eval.runtime.resume import spec_from_meta

    # the spec as the command line gives it (planning would restart this module's Ray with room for 6 actors)
    written = spec_from_args(build_parser().parse_args([str(CARTPOLE), "--workers", "3"]))
    spec = spec_from_meta({"spec": written.to_json()}, tmp_path / "run.sqlite")
    assert (spec.workers, spec.ray_address) == (3, None)


@pytest.mark.parametrize("args, says", [
    (["--workers", "0"], "--workers must be 1 or more"),  # refused by the parser
    (["--workers", "2", "--ray-address", "127.0.0.1:9"], "cannot reach Ray at 127.0.0.1:9"),  # by the join check
])
def test_bad_cluster_input_is_one_line_and_exit_2(tmp_path, args, says):
    done = cli(CARTPOLE, "--headless", *args, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert says in lines[-1] and "Traceback" not in done.stderr


def test_an_address_that_is_no_host_port_is_refused_before_any_dialling():
    """The join check's other refusals reach the user as the one above does (BadInput from the same call);
    this one is checked at the call, not by a third CLI process that loads the checkpoint first."""
    from tui_eval.cluster.join_check import check_joinable
    from tui_eval.errors import BadInput

    for address in ("nonsense", "127.0.0.1:", "ray://:10001"):
        with pytest.raises(BadInput, match="--ray-address expects auto, HOST:PORT or ray://HOST:PORT"):
            check_joinable(address)


def test_a_hold_that_an_actor_runs_before_an_offer_sent_ahead_of_it_still_hands_back_that_offers_seeds(tmp_path):
    """A threaded actor may run calls out of order (Ray does not keep their order): a hold waits for the
    offers the driver sent before it, and a hold that runs after a newer release is ignored. On one real actor."""
    import ray

    from tui_eval.cluster.build import build_remote_path

    plan = plan_for(CARTPOLE, "--paths", "connectors", "--workers", "1", "--num-envs", "1", log=tmp_path / "r.sqlite")
    path = build_remote_path(plan.spec, "connectors", False, 1)
    actor = path._slots[0].handle
    try:
        hold = actor.hold.remote(1, 1)  # the driver sent one offer before this hold; the actor runs the hold first
        time.sleep(0.1)  # the hold is under way (it waits up to 1 s for the offer)
        actor.offer.remote([(100, 0), (101, 0)])
        assert [tuple(s) for s in ray.get(hold, timeout=10)] == [(100, 0), (101, 0)]  # not left queued while held
        ray.get(actor.release.remote(3), timeout=10)
        assert ray.get(actor.hold.remote(2, 1), timeout=10) == []  # older than the release: ignored
        actor.offer.remote([(102, 0)])  # so the actor is not held: this seed runs
        records = wait_until(lambda: ray.get(actor.poll.remote(0.5), timeout=10)[0], timeout=60)
        assert [(r.seed, r.block) for r in records] == [(102, 0)]
    finally:
        path.close()


def test_the_seed_dispensers_hold_hands_back_every_queued_seed_when_its_answer_comes_late(monkeypatch):
    """`evaluate` with workers: its remote runners' envs take seeds from a dispenser actor. A hold whose answer
    comes after the pump stopped waiting (here at once, as on a loaded machine) still hands back every seed
    no env took, by the pump once it comes; nothing is handed out until the release. A real dispenser actor;
    the feed is the engine's as the pump sees it (a stand-in: nothing handed out while paused)."""
    import ray

    from tests.support.rsl import ListFeed
    from tui_eval.feed import FeedRelay
    from tui_eval.integrations.rllib.paths import seed_dispenser
    from tui_eval.integrations.rllib.paths.seed_dispenser import DispenserFeed, DispenserPump
    from tui_eval.paths.ray_names import actor_name

    class PausableFeed(ListFeed):
        paused = False
        given_back: list = []

        def take(self):
            return None if self.paused else super().take()

        def give_back(self, seeds):
            self.given_back = self.given_back + list(seeds)

    monkeypatch.setattr(seed_dispenser, "CONTROL_TIMEOUT_S", 0.0)
    feed, relay = PausableFeed(range(100)), FeedRelay(track=True)
    relay.feed = feed
    pump = DispenserPump(actor_name("seeds"), relay, target=4)
    try:
        pump.start()
        env = DispenserFeed(pump.name, worker_index=1)
        assert wait_until(env.take, timeout=30) == (0, 0)
        # the pump tops the dispenser up to 4 or more (it may see the queue before its last offer is in)
        wait_until(lambda: ray.get(pump.handle.wait_below.remote(0, 0))[1] >= 3, timeout=30)
        feed.paused = True
        answered = pump.hold()
        not_taken = [(seed, 0) for seed in feed.taken if seed != 0]  # handed to the pump, not taken by an env
        wait_until(lambda: len(answered) + len(feed.given_back) >= len(not_taken), timeout=30)
        assert sorted(answered + feed.given_back) == not_taken
        assert relay.running_now() == {(0, 0)}  # only the seed an env took is still running
        assert env.take() is None  # held
        feed.paused = False  # this feed hands out its next seeds (the engine's would hand back those first)
        pump.release()
        assert wait_until(env.take, timeout=30) == (len(not_taken) + 1, 0)
    finally:
        pump.close()
