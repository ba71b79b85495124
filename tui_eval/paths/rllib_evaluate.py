"""Path `evaluate`: the real `Algorithm.from_checkpoint` + `Algorithm.evaluate()`.

Seeds get in through the env: the checkpoint's env is wrapped in a GuardedEnv (registered under
GUARDED_ENV) that takes each reset's seed from this run's SeedChannel. Results come back through
RLlib's own metrics: an `on_episode_end` callback logs one item per episode with reduce="item_series".
The evaluation runner is local (in this process), so the channel is a plain thread-safe queue that
the env creator finds by token; the creator is a module-level function, which ray pickles by
reference, so the registry it reads is this module's and not a copy.
"""

from __future__ import annotations

import collections
import threading
import uuid
from pathlib import Path
from typing import Any

from tui_eval.envs import (BLOCK_KEY, IDLE_KEY, INVALID_KEY, SEED_KEY, SUCCESS_KEY, GuardedEnv,
                           import_registrations)
from tui_eval.paths.base import Emit, InferencePath, SeedFeed
from tui_eval.spec import EpisodeRecord

GUARDED_ENV = "tui_eval_guarded_env"
METRIC = "tui_eval_episodes"
_CHANNELS: dict[str, "SeedChannel"] = {}


class SeedChannel:
    """The seeds of one `evaluate()` call, handed to env resets in order; empty means: go idle."""

    def __init__(self) -> None:
        self._seeds: collections.deque[tuple[int, int]] = collections.deque()
        self._lock = threading.Lock()

    def load(self, seeds: list[tuple[int, int]]) -> None:
        with self._lock:
            self._seeds.clear()
            self._seeds.extend(seeds)

    def take(self) -> tuple[int, int] | None:
        with self._lock:
            return self._seeds.popleft() if self._seeds else None


def guarded_env_creator(env_context: dict[str, Any]):
    """The env RLlib builds for evaluation: the checkpoint's env behind a GuardedEnv fed by our channel."""
    import gymnasium as gym

    import_registrations()
    cfg = env_context["tui_eval"]
    env = gym.make(cfg["env_id"], **cfg["env_config"])
    return GuardedEnv(env, seed_source=_CHANNELS[cfg["token"]].take, success_key=cfg["success_key"],
                      step_timeout=cfg["step_timeout"])


def log_episode(*, episode, metrics_logger, **kwargs) -> None:
    """on_episode_end callback: one item per finished episode, read back from evaluate()'s results."""
    first, last = episode.get_infos(0), episode.get_infos(-1)
    if IDLE_KEY in first or SEED_KEY not in first:
        return
    item = {
        "seed": int(first[SEED_KEY]), "block": int(first[BLOCK_KEY]), "return": float(episode.get_return()),
        "length": len(episode), "success": last.get(SUCCESS_KEY), "invalid": last.get(INVALID_KEY),
        "wall_s": float(episode.get_duration_s()),
    }
    metrics_logger.log_value(METRIC, item, reduce="item_series")


def ensure_ray() -> None:
    import ray

    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False,
                 num_cpus=2, ignore_reinit_error=True)


class RllibEvaluatePath(InferencePath):
    name = "evaluate"

    def __init__(self, *, checkpoint: Path, config_state: dict[str, Any], algo_class, module_id: str, env_id: str,
                 env_config: dict[str, Any], num_envs: int, device: str, explore: bool,
                 success_key: str | None, step_timeout: float | None):
        from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
        from ray.tune.registry import register_env

        ensure_ray()
        register_env(GUARDED_ENV, guarded_env_creator)
        self.explore = explore
        self.token = uuid.uuid4().hex
        self.channel = _CHANNELS[self.token] = SeedChannel()
        self.batch_size = 2 * num_envs  # episodes per evaluate() call: small, so pause and stop stay quick
        config = AlgorithmConfig.from_state(dict(config_state))
        gpus = 1 if device.startswith("cuda") else 0
        config = (
            config.environment(env=GUARDED_ENV, env_config={"tui_eval": {
                "token": self.token, "env_id": env_id, "env_config": env_config,
                "success_key": success_key, "step_timeout": step_timeout}})
            # Training runners are not used; keep the local one small.
            .env_runners(num_env_runners=0, num_envs_per_env_runner=1, num_gpus_per_env_runner=gpus)
            .learners(num_learners=0, num_gpus_per_learner=gpus)
            .evaluation(evaluation_interval=1, evaluation_num_env_runners=0,
                        evaluation_duration=self.batch_size, evaluation_duration_unit="episodes",
                        evaluation_config={"num_envs_per_env_runner": num_envs, "explore": explore})
            .callbacks(on_episode_end=log_episode)
        )
        self.algo = algo_class.from_checkpoint(str(checkpoint), config=config)
        self.description = (f"Algorithm.from_checkpoint + Algorithm.evaluate() on a local evaluation "
                            f"EnvRunner, {num_envs} envs, {self.batch_size} episodes per call")

    def set_explore(self, explore: bool) -> None:
        # The evaluation config is frozen inside the Algorithm; explore is read by the eval runner's sample().
        self.explore = explore
        runner = self.algo.eval_env_runner
        object.__setattr__(runner.config, "explore", explore)

    def _set_duration(self, episodes: int) -> None:
        # evaluate() reads evaluation_duration from the (frozen) config at call time; the last batch of a
        # run can be smaller than the others, so the duration follows the batch.
        config = self.algo.config
        if config.evaluation_duration != episodes:
            config._is_frozen = False
            config.evaluation_duration = episodes
            config._is_frozen = True

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        while not feed.cancelled:
            batch: list[tuple[int, int]] = []
            while len(batch) < self.batch_size:
                seed = feed.take()
                if seed is None:
                    break
                batch.append(seed)
            if not batch:
                return
            self.channel.load(batch)
            self._set_duration(len(batch))
            results = self.algo.evaluate()
            waiting = set(batch)
            for item in _episode_items(results):
                key = (item["seed"], item["block"])
                if key not in waiting:
                    continue  # an item from an earlier call that the metrics tree still holds
                waiting.discard(key)
                emit(EpisodeRecord(path=self.name, seed=item["seed"], block=item["block"], ret=item["return"],
                                   length=item["length"], success=item["success"],
                                   invalid=item["invalid"] is not None, reason=item["invalid"],
                                   wall_s=item["wall_s"], explore=self.explore))
            for seed, block in sorted(waiting):
                emit(EpisodeRecord(path=self.name, seed=seed, block=block, ret=0.0, length=0, success=False,
                                   invalid=True, reason="evaluate() returned no episode for this seed",
                                   explore=self.explore))

    def close(self) -> None:
        _CHANNELS.pop(self.token, None)
        try:
            self.algo.stop()
        except Exception:
            pass


def _episode_items(results: dict[str, Any]) -> list[dict[str, Any]]:
    runners = results.get("env_runners", results.get("evaluation", {}).get("env_runners", {}))
    items = runners.get(METRIC, [])
    return items if isinstance(items, list) else []
