"""The `evaluate` path's remote evaluation EnvRunners, watched between evaluate() calls.

`Algorithm.evaluate()` marks a runner that died unhealthy and goes on with the others, but only
`train()` ever brings one back: called on its own, a dead runner stays dead and the seeds it had taken
are never recorded (the run would wait for them for ever). So after each call the path asks here:
- a runner newly unhealthy: the seeds it had taken are queued again at once (the dispenser knows which),
  and the loss is reported with its reason;
- runners down: pinged (RLlib's `probe_unhealthy_env_runners`, every few seconds); Ray restarts a dead runner's actor
  (`restart_failed_env_runners`, on by default and forced on here) wherever the cluster has room, and a
  runner that answers is healthy again: the next evaluate() syncs its weights and connector states;
- a runner down for long: the cluster has no room for it (its node left); said once, and the run goes on
  with the others, or waits for room when none is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tui_eval.integrations.rllib.paths.seed_dispenser import DispenserPump

PROBE_S = 0.5  # a runner Ray has brought back answers a ping well within this
PROBE_EVERY_S = 2.0  # while others play: a ping waits PROBE_S for a runner still starting, so not after every call
NO_ROOM_S = 10.0  # down this long: Ray has found no room for it
Report = Callable[[str], bool]  # a message for the run; True: give the path up


class RunnerWatch:
    def __init__(self, algo: Any, pump: DispenserPump, workers: int, on_back: Callable[[], None]):
        self._algo, self._pump, self._workers = algo, pump, workers
        self._on_back = on_back  # a runner is back: re-apply what its config lacks (explore)
        self._down: dict[int, float] = {}  # worker index -> when it was seen down
        self._said_no_room: set[int] = set()
        self._probed = float("-inf")  # when runners down were last pinged
        self.placement: tuple[str, ...] = ()

    @property
    def _group(self) -> Any:
        return self._algo.eval_env_runner_group

    def healthy(self) -> int:
        return self._group.num_healthy_remote_workers()

    def check(self, lost: Report, notice: Report) -> None:
        """After a call: losses reported and their seeds queued again; runners back or still waited for.
        Episodes whose step froze are left in `self.frozen` for the path to record invalid."""
        healthy = set(self._group.healthy_env_runner_ids())
        for index in range(1, self._workers + 1):
            if index not in healthy and index not in self._down:
                self._down[index] = time.monotonic()
                self._pump.runner_down(index)
                again = self._pump.reclaim()
                froze = self._pump.frozen.get(index)
                what = "died" if froze is None else f"froze: {froze[1]}; its episode of seed {froze[0][0]} is invalid"
                if lost(f"evaluation EnvRunner {index} ({self._where(index)}) {what}; {len(again)} unfinished "
                        "seed(s) run again on the other runners; Ray restarts it"):
                    return
        while self._pump.news:
            if lost(self._pump.news.pop(0)):
                return
        again = self._pump.reclaim()  # a runner Ray restarted before it was seen down (a new pid at a reset)
        if again and lost(f"an evaluation EnvRunner was restarted; its {len(again)} unfinished seed(s) run again"):
            return
        if self._down and time.monotonic() - self._probed >= PROBE_EVERY_S:
            self._probe(notice)

    def wait_for_room(self, notice: Report) -> None:
        """No runner is healthy: ping them (about a second), saying once per runner that it is waited for."""
        started = time.monotonic()
        self._probe(notice)
        rest = 1.0 - (time.monotonic() - started)
        if rest > 0 and not self.healthy():
            time.sleep(rest)

    def _probe(self, notice: Report) -> None:
        back = self._group.probe_unhealthy_env_runners(timeout_seconds=PROBE_S)
        self._probed = time.monotonic()
        if back:
            self._on_back()
        for index in back:
            self._down.pop(index, None)
            self._said_no_room.discard(index)
            notice(f"evaluation EnvRunner {index} is back ({self._where(index)})")
        now = time.monotonic()
        if not any(now - since > NO_ROOM_S for since in self._down.values()) or self._room():
            return  # none down for long, or room enough: Ray is still starting it
        for index, since in self._down.items():
            if now - since > NO_ROOM_S and index not in self._said_no_room:
                self._said_no_room.add(index)
                left = self.healthy()
                notice(f"evaluation EnvRunner {index} has been down {now - since:.0f}s: the Ray cluster has no "
                       f"room for it (each runner needs {self._needs()}); "
                       + (f"going on with {left} runner(s)" if left else "waiting for a node to join"))

    def _room(self) -> bool:
        """True when the cluster has the CPUs one runner asks for free now."""
        import ray

        return ray.available_resources().get("CPU", 0) >= self._algo.evaluation_config.num_cpus_per_env_runner

    def _where(self, index: int) -> str:
        return self.placement[index - 1] if 0 < index <= len(self.placement) else "placement unknown"

    def _needs(self) -> str:
        config = self._algo.evaluation_config
        gpus = config.num_gpus_per_env_runner
        return f"{config.num_cpus_per_env_runner:g} CPU" + (f", {gpus:g} GPU" if gpus else "")
