"""What ends an `evaluate()` call of the evaluate path on a local runner, and where its episodes go as they end.

A call samples `evaluation_duration` env steps. Asked for a fixed number, a call ran on after the run's last
episode had ended (every env idle, stepping the full pipeline for nothing) and after a stop, until its
steps were done: up to a second of a path's time per run, and a stop that waited for it. The local runner's
loop (SingleAgentEnvRunner and MultiAgentEnvRunner alike, ray 2.60) compares the steps it took with that number
before every vector step, `while ts < num_timesteps`; `CallLength` is that number, an int, whose answer is also
"no" once the call has nothing left to do. Python asks the right operand's reflected comparison first where its
class is a subclass of the left one's, so `ts < length` calls `length.__gt__(ts)`.

Episodes that end during a call reach the path at once (`ItemSinks`), not in the call's results: a run's
stop rule sees them while the call goes on, and the call ends as soon as the rule stops the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tui_eval.feed import FeedRelay
from tui_eval.paths.activity import guarded_envs


class CallLength(int):
    """The steps a call asks for; `over()` ends the call before them. `taken`: the steps the runner had taken
    when it last asked (at the call's end, the call's steps)."""

    over: Callable[[], bool]
    taken: int

    def __new__(cls, steps: int, over: Callable[[], bool]) -> CallLength:
        length = super().__new__(cls, steps)
        length.over, length.taken = over, 0
        return length

    def __gt__(self, taken: object) -> bool:
        if not isinstance(taken, int):
            return NotImplemented
        self.taken = taken
        return int(self) > taken and not self.over()

    def __reduce__(self):  # a copy (a config copied or sent) is the plain number
        return int, (int(self),)


def nothing_left(relay: FeedRelay, runner_env: Callable[[], Any]) -> Callable[[], bool]:
    """True when a call on the runner whose env `runner_env()` gives has nothing left to do: the run is
    stopping, or the feed had no seed for the last env that asked and every env is idle."""
    found: dict[str, Any] = {"env": None, "guards": []}

    def guards() -> list:
        env = runner_env()  # a runner makes its env again after a failed step: look again then
        if env is not found["env"]:
            found["env"], found["guards"] = env, guarded_envs(env)
        return found["guards"]

    def over() -> bool:
        if relay.cancelled:
            return True
        if not relay.dry:
            return False
        envs = guards()
        return bool(envs) and all(env.idle for env in envs)

    return over


class ItemSinks:
    """Where the on_episode_end callback of a runner in this process sends an episode's item: to the path whose
    token its env_config carries while that path runs; elsewhere (a remote runner, no run) into the runner's
    metrics, which the call's results carry."""

    def __init__(self, token_key: str, metric: str) -> None:
        self.token_key, self.metric = token_key, metric
        self._sinks: dict[str, Callable[[dict[str, Any]], object]] = {}

    def open(self, token: str, sink: Callable[[dict[str, Any]], object]) -> None:
        self._sinks[token] = sink

    def close(self, token: str) -> None:
        self._sinks.pop(token, None)

    def report(self, env_runner: Any, metrics_logger: Any, item: dict[str, Any]) -> None:
        config = getattr(env_runner, "config", None)
        env_config = getattr(config, "env_config", None) or {}
        token = env_config.get(self.token_key)
        sink = self._sinks.get(token) if isinstance(token, str) else None
        if sink is not None:
            sink(item)
        else:
            metrics_logger.log_value(self.metric, item, reduce="item_series")
