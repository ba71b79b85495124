"""Path `evaluate`: the user's own `Algorithm.from_checkpoint` + `Algorithm.evaluate()`.

The checkpoint's config runs unchanged, its evaluation config as RLlib merges it (`evaluation_config`'s
env, env_config, explore, connectors, envs per runner). tui-eval adds two things only:
- seeding: the evaluation env is the user's env, made by the same recipe RLlib uses (a Tune creator gets
  exactly its env_config), behind a GuardedEnv that takes each reset's seed from the run's feed. The
  env is registered under GUARDED_ENV; its env_config carries only a token naming this path's recipe
  and feed, which the creator strips before calling the user's code. The creator is a module-level
  function, which ray pickles by reference, so the registry it reads is this module's (the
  evaluation runner is local: in this process).
- collection: an `on_episode_end` callback, chained after the user's own, logs one item per episode
  with reduce="item_series"; each `evaluate()` result carries the episodes that ended in that call.
With `--workers N` the evaluation runs as RLlib scales it: `evaluation_num_env_runners=N` remote runners;
their envs take seeds from a SeedDispenser actor (seed_dispenser.py), their recipe travels in the
env_config, and a runner that dies is restarted by Ray and brought back between calls (eval_runners.py;
its unreported seeds run again at once).
`evaluate()` runs with `evaluation_duration_unit="timesteps"`: the runner's episodes then carry on
from one call to the next (RLlib resets envs between calls only in episode mode), so every episode
runs to its end, seeds are taken as envs reset, and calls can be short without cutting episodes. On the
local runner a call also ends once every env is idle with no seed to take, or at a stop, and each episode
reaches the run as it ends (eval_calls.py).
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import time
import uuid
from pathlib import Path
from typing import Any

from tui_eval.envs.guard import BLOCK_KEY, IDLE_KEY, INVALID_KEY, SEED_KEY, SUCCESS_KEY, GuardedEnv
from tui_eval.feed import FeedRelay, SeedFeed
from tui_eval.integrations.rllib.parts import RLLIB_PARTS
from tui_eval.integrations.rllib.paths.env import EnvRecipe
from tui_eval.integrations.rllib.paths.eval_calls import CallLength, ItemSinks, nothing_left
from tui_eval.integrations.rllib.paths.eval_runners import RunnerWatch
from tui_eval.integrations.rllib.paths.filters import freeze_runner_filters
from tui_eval.integrations.rllib.paths.rerun import RllibRerun
from tui_eval.integrations.rllib.paths.seed_dispenser import DispenserFeed, DispenserPump
from tui_eval.local_ray import ensure_ray
from tui_eval.paths.activity import envs_activity
from tui_eval.paths.base import Emit, InferencePath, LiveParts, PathGivenUp
from tui_eval.paths.ray_names import actor_name
from tui_eval.records import EpisodeRecord

GUARDED_ENV = "tui_eval_guarded_env"
METRIC = "tui_eval_episodes"
TOKEN_KEY = "tui_eval_token"
REMOTE_KEY = "tui_eval_remote"  # for remote runners: (recipe, success_key, step_timeout, dispenser name), pickled
SEEDS_PER_RUNNER = 4  # seeds waiting in the dispenser per remote runner
#: seconds one evaluate() call aims at: long enough that its fixed costs (weight and connector-state
#: sync, metrics reduce) stay small, short enough that a remote runner's stop and pause take effect quickly (a local
#: call ends by itself at a stop, and once every env is idle)
CALL_SECONDS = 1.0
DRAIN_CALL_SECONDS = 0.1  # a remote call's length while no new seed is to be had


LIVE_PATHS: dict[str, tuple[EnvRecipe, FeedRelay, str | None, float | None]] = {}
#: where a local runner's episodes go as they end (the running path's, by token)
ITEM_SINKS = ItemSinks(TOKEN_KEY, METRIC)


def evaluation_env_parts(env_context) -> tuple[EnvRecipe, SeedFeed, str | None, float | None]:
    """What an evaluation env's guard is made of: the user's env recipe, the feed its resets take seeds from
    (the path's, in this process; the seed dispenser's, in a remote runner), the success key, the step timeout."""
    token = env_context[TOKEN_KEY]
    if token in LIVE_PATHS:  # a runner in this process
        return LIVE_PATHS[token]
    recipe, success_key, step_timeout, dispenser = pickle.loads(env_context[REMOTE_KEY])  # a remote runner
    return recipe, DispenserFeed(dispenser, env_context.worker_index, step_timeout), success_key, step_timeout


def guarded_env_creator(env_context):
    """The evaluation env: the user's env, made as RLlib would make it, behind a GuardedEnv."""
    recipe, seeds, success_key, step_timeout = evaluation_env_parts(env_context)
    return GuardedEnv(recipe.make_one(env_context, env_checker=False), feed=seeds, success_key=success_key,
                      step_timeout=step_timeout)


def log_episode(*, episode, metrics_logger, prev_episode_chunks=(), env_runner=None, **kwargs) -> None:
    """on_episode_end callback: one item per finished episode, to the running path at once (a local runner) or
    read back from evaluate()'s results (a remote one).

    An episode that spans several evaluate() calls reaches this callback as its last chunk, with the
    earlier chunks in `prev_episode_chunks` (as RLlib's own episode metrics add them up).
    """
    chunks = [*prev_episode_chunks, episode]
    first, last = chunks[0].get_infos(0), episode.get_infos(-1)
    if IDLE_KEY in first or SEED_KEY not in first:
        return
    item = {
        "seed": int(first[SEED_KEY]), "block": int(first[BLOCK_KEY]),
        # one running sum over all chunks' rewards, in order, as get_return() adds up a whole episode
        "return": float(sum(r for c in chunks for r in c.get_rewards())), "length": sum(len(c) for c in chunks),
        "success": last.get(SUCCESS_KEY), "invalid": last.get(INVALID_KEY),
        "wall_s": float(sum(c.get_duration_s() for c in chunks)),
    }
    ITEM_SINKS.report(env_runner, metrics_logger, item)


class RllibEvaluatePath(RllibRerun, InferencePath):
    name = "evaluate"
    #: the Tune name its evaluation env is registered under, the creator, the on_episode_end callback that
    #: reports episodes, and settings of the evaluation config besides tui-eval's own (a multi-agent
    #: checkpoint's path sets its own: multi_agent_evaluate.py)
    env_name = GUARDED_ENV
    env_creator = staticmethod(guarded_env_creator)
    episode_callback = staticmethod(log_episode)
    evaluation_extras: dict[str, Any] = {}

    def __init__(self, *, checkpoint: Path, config, algo_class, module_id: str, recipe: EnvRecipe, num_envs: int,
                 device: str, explore: bool, success_key: str | None, step_timeout: float | None,
                 use_evaluation_config: bool = True, workers: int = 0, gpus_per_runner: float = 0.0,
                 freeze_filters: bool = False):
        from ray.tune.registry import register_env

        ensure_ray()
        register_env(self.env_name, type(self).env_creator)
        self.explore = explore
        self.recipe = recipe
        self.token = uuid.uuid4().hex
        self.seeds = FeedRelay(track=True)  # evaluate() reports episodes in batches
        self.workers, self.replicas = workers, max(1, workers)
        self.pump: DispenserPump | None = None
        if workers:  # the local runner only holds state to sync: its envs never get a seed
            self.pump = DispenserPump(actor_name("seeds"), self.seeds, SEEDS_PER_RUNNER * workers)
            from ray import cloudpickle  # a recipe may hold a class made at run time (make_multi_agent's MultiEnv)

            self._remote_env = cloudpickle.dumps((recipe, success_key, step_timeout, self.pump.name))
        LIVE_PATHS[self.token] = (recipe, FeedRelay() if workers else self.seeds, success_key, step_timeout)
        self.num_envs = num_envs
        self.call_steps = 50 * num_envs * max(1, workers)  # grown to CALL_SECONDS' worth once a call was timed
        self._rate: float | None = None  # env steps per second of the last call
        self._calls = 0
        self._call_started: float | None = None  # perf_counter() at the start of the evaluate() call running
        self._gpus_per_runner = gpus_per_runner
        # Without evaluation runners in the checkpoint's config, the user's evaluate() samples with the main
        # config and ignores evaluation_config: the runner made here then gets the main config too.
        evaluation_config = config.evaluation_config if use_evaluation_config else None
        self.algo = restore_algorithm(algo_class, checkpoint,
                                      self._config(config, evaluation_config, num_envs, device, explore),
                                      env_name=self.env_name)
        if self.pump is not None:
            self.pump.started()  # its actor started while the runners were built
        # The Algorithm sets RLlib's log level from its config; its warnings about evaluation durations do
        # not apply to calls whose episodes carry on across calls.
        logging.getLogger("ray.rllib").setLevel(logging.ERROR)
        if workers:  # a runner that dies is reported by the path, with its seeds; not as RLlib's traceback too
            logging.getLogger("ray.rllib.utils.actor_manager").setLevel(logging.CRITICAL)
        self._sync_like_evaluate()
        self.freeze_filters = freeze_filters
        if freeze_filters or not use_evaluation_config:
            self._connector_states_from_training_runner()
        frozen = self._freeze_filters()
        where = f"{workers} remote evaluation EnvRunners" if workers else "a local evaluation EnvRunner"
        self.description = (f"Algorithm.from_checkpoint + Algorithm.evaluate() (evaluation config as RLlib merges "
                            f"it) on {where}, {num_envs} envs each, env {recipe.name}"
                            + (f", {frozen} filter(s) frozen at the checkpoint's statistics" if frozen else ""))
        self.watch = None if self.pump is None else RunnerWatch(self.algo, self.pump, workers, self._runner_back)
        self._nothing_left = nothing_left(self.seeds, lambda: self.algo.eval_env_runner.env)
        self.placement = self._runner_placement()

    def _runner_back(self) -> None:
        self.set_explore(self.explore)  # a restarted runner has the config it was built with
        self._freeze_filters()
        self.placement = self._runner_placement()

    def _connector_states_from_training_runner(self) -> None:
        """The local evaluation runner's env-to-module state (MeanStdFilter's statistics) set to the training
        runner's, the checkpoint's. RLlib syncs connector states into remote evaluation runners at every
        evaluate() call, never into a local one (ray 2.60: sync_env_runner_states returns early without remote
        runners), whose filter would start from no statistics at all; the user's evaluate() without evaluation
        runners samples on the training runner itself, with the checkpoint's; a deployment normalises with them."""
        local = self.algo.eval_env_runner_group.local_env_runner
        if self.workers or local is None or getattr(self.algo, "env_runner", None) is None:
            return
        local._env_to_module.set_state(self.algo.env_runner._env_to_module.get_state())

    def _freeze_filters(self) -> int:
        """--freeze-filters: the evaluation runners' MeanStdFilter stops updating (each evaluate() call still sets
        it to the training runner's statistics, the checkpoint's, which then stay); filters per runner."""
        if not self.freeze_filters:
            return 0
        group = self.algo.eval_env_runner_group
        if self.workers:
            # RLlib 2.60 sends remote runners their connector states asynchronously, one set_state in flight per
            # runner and the later ones dropped meanwhile: a runner's first episodes can normalise with no
            # statistics at all (every observation clipped to +-10). Set the checkpoint's here and wait for it.
            state = self.algo.env_runner._env_to_module.get_state()
            group.foreach_env_runner(lambda runner: runner._env_to_module.set_state(state), local_env_runner=False)
        counts = group.foreach_env_runner(freeze_runner_filters, local_env_runner=not self.workers)
        return max(counts, default=0)

    def _sync_like_evaluate(self) -> None:
        """The restored evaluation runner holds the weights and connector states of its last evaluation, not
        the checkpoint's: each evaluate() call syncs them first. Sync them here as evaluate() does (weights
        from the learner, connector states from the training runner), without stepping an env, so that
        what the doctor reads of this path before its first call is what evaluate() will use."""
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

        algo = self.algo
        group = algo.eval_env_runner_group or algo.env_runner_group
        group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)
        if algo.eval_env_runner_group is not None and algo.evaluation_config.broadcast_env_runner_states:
            algo.eval_env_runner_group.sync_env_runner_states(
                config=algo.evaluation_config, from_worker=algo.env_runner,
                env_steps_sampled=algo.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0),
                env_to_module=algo.env_to_module_connector, module_to_env=algo.module_to_env_connector)

    def _config(self, config, evaluation_config, num_envs: int, device: str, explore: bool):
        import gymnasium as gym

        gpus = 1 if device.startswith("cuda") else 0
        env_config: dict[str, Any] = {TOKEN_KEY: self.token}
        if self.workers:
            env_config[REMOTE_KEY] = self._remote_env
        evaluation = _updated(evaluation_config, {
            "env": self.env_name, "env_config": env_config, "num_envs_per_env_runner": num_envs,
            "explore": explore, "gym_env_vectorize_mode": gym.VectorizeMode.SYNC, **self.evaluation_extras,
            **({"num_gpus_per_env_runner": self._gpus_per_runner} if self.workers else {})})
        user_callbacks = config.callbacks_on_episode_end
        callbacks = [*(user_callbacks if isinstance(user_callbacks, list) else [user_callbacks] if user_callbacks
                       else []), self.episode_callback]
        config = config.copy(copy_frozen=False)
        if config.is_offline:  # its Algorithm would read the training dataset, which evaluate() never uses
            from tui_eval.integrations.rllib.paths.offline_data import evaluation_only

            config = evaluation_only(config)
        return (
            config
            # The training runner only holds the restored connector states that evaluate() syncs from.
            .env_runners(num_env_runners=0, num_envs_per_env_runner=1, num_gpus_per_env_runner=gpus)
            .learners(num_learners=0, num_gpus_per_learner=gpus)
            # Remote runners reset their envs at each call unless told not to (the local runner never does):
            # episodes carry on across calls on both, and no seed is cut short.
            .evaluation(evaluation_interval=1, evaluation_num_env_runners=self.workers,
                        evaluation_parallel_to_training=False, evaluation_force_reset_envs_before_iteration=False,
                        evaluation_duration=self.call_steps, evaluation_duration_unit="timesteps",
                        evaluation_config=evaluation)
            .callbacks(on_episode_end=callbacks)
            # Ray restarts a dead evaluation runner (the watch brings it back between calls).
            .fault_tolerance(restart_failed_env_runners=True)
        )

    def set_explore(self, explore: bool) -> None:
        # The evaluation config is frozen inside the Algorithm; explore is read by the eval runner's sample().
        self.explore = explore
        self.algo.eval_env_runner_group.foreach_env_runner(
            lambda runner: object.__setattr__(runner.config, "explore", explore), local_env_runner=True)

    def _runner_placement(self) -> tuple[str, ...]:
        """Where each remote runner runs, by worker index ("down" for one not healthy now)."""
        if not self.workers:
            return ()
        where = dict(self.algo.eval_env_runner_group.foreach_env_runner(
            lambda runner: (runner.worker_index, f"{socket.gethostname()} pid {os.getpid()}"),
            local_env_runner=False))
        placement = tuple(where.get(index, "down") for index in range(1, self.workers + 1))
        if self.watch is not None:
            self.watch.placement = placement
        return placement

    def _set_call_steps(self, steps: int) -> int:
        """Sets the next call's length; returns it. On the local runner, a `CallLength` that also ends the call
        once it has nothing left to do (eval_calls.py)."""
        length = steps if self.workers else CallLength(steps, self._nothing_left)
        # evaluate() reads evaluation_duration from the (frozen) config at call time.
        config = self.algo.config
        config._is_frozen = False
        config.evaluation_duration = length
        config._is_frozen = True
        return length

    def _next_call_steps(self) -> int:
        """A call's length. Remote runners draining (the feed had no seed for the last env that asked: the run's
        end, or a pause), envs that finish go idle while the rest play on, and a call runs its steps to the end
        however few envs still play: short calls then, so that the path returns soon after its last episode.
        (A local runner's call ends by itself once every env is idle.)"""
        if self.workers and self.seeds.dry and self._rate is not None:
            return max(self.num_envs, int(self._rate * DRAIN_CALL_SECONDS))
        return self.call_steps

    def live_parts(self) -> LiveParts:
        runner = self.algo.eval_env_runner
        return LiveParts("evaluate", runner.module, runner._env_to_module, runner._module_to_env,
                         self.recipe.make_one, self.recipe, runner.config, bool(runner.config.explore),
                         library=RLLIB_PARTS)

    def run(self, feed: SeedFeed, emit: Emit) -> None:
        self.seeds.feed, self.seeds.dry = feed, False  # dry: said of the last run's feed
        if self.seeds.running and not self.workers:  # the last run stopped with episodes in flight: dropped
            self.seeds.running.clear()
            self.algo.eval_env_runner._needs_initial_reset = True  # RLlib's flag: reset envs and episodes first
        if self.pump is not None:
            self.pump.start()
        else:  # the local runner's episodes reach the run as they end
            ITEM_SINKS.open(self.token, lambda item: self._emit_item(item, emit))
        try:
            while not feed.cancelled:
                if self.watch is not None and not self.watch.healthy():  # every runner down: wait for room
                    self.watch.wait_for_room(self._notice(feed))
                    continue
                length = self._set_call_steps(self._next_call_steps())
                started = self._call_started = time.perf_counter()
                self._calls += 1
                results = self.algo.evaluate()
                self._call_started = None
                taken = length.taken if isinstance(length, CallLength) else length  # a call may end early
                self._time_call(taken, time.perf_counter() - started)
                finished = [item for item in _episode_items(results) if self._emit_item(item, emit)]
                if self.pump is not None:
                    self._collect_remote(feed, [(item["seed"], item["block"]) for item in finished], emit)
                if self.seeds.dry and not self.seeds.running:
                    return
        except Exception:
            if self.workers:  # the engine loads the path afresh: its runners need the room these hold
                self.close()
            raise
        finally:
            if self.pump is not None:
                self.pump.stop()
            ITEM_SINKS.close(self.token)
            self.seeds.feed = None

    def _time_call(self, steps: int, seconds: float) -> None:
        """The next call's length from this one's rate: CALL_SECONDS' worth, at most 4x the last."""
        if steps < self.num_envs:  # a call that ended at once says nothing of the rate
            return
        self._rate = steps / max(seconds, 1e-3)  # env steps per second
        self.call_steps = max(10 * self.num_envs, min(int(self._rate * CALL_SECONDS), 4 * self.call_steps))

    def _emit_item(self, item: dict[str, Any], emit: Emit) -> bool:
        """Emits the episode of an item once (a seed still running); True when it did."""
        if not self.seeds.finish((item["seed"], item["block"])):
            return False
        emit(self._record(item))
        return True

    def _collect_remote(self, feed: SeedFeed, finished: list, emit: Emit) -> None:
        """Forget recorded seeds at the dispenser; run again the seeds of runners that died, bring them back;
        record invalid the episodes whose step froze in a runner."""
        assert self.pump is not None and self.watch is not None
        self.pump.finished(finished)
        worker_lost = getattr(feed, "worker_lost", None)

        def lost(message: str) -> bool:
            if worker_lost is not None and worker_lost(message):
                raise PathGivenUp(message)
            return False

        self.watch.check(lost, self._notice(feed))
        for key, why in self.pump.frozen.values():
            if self.seeds.finish(key):
                emit(self._record({"seed": key[0], "block": key[1], "return": 0.0, "length": 0, "success": False,
                                   "invalid": why, "wall_s": 0.0}))
        self.pump.frozen.clear()

    @staticmethod
    def _notice(feed: SeedFeed):
        notice = getattr(feed, "notice", None)
        return (lambda message: bool(notice(message))) if notice is not None else (lambda message: False)

    def activity(self) -> str | None:
        """The evaluate() call in progress and, on a local runner, its envs' episodes."""
        started = self._call_started
        if started is None:
            return None
        doing = f"in evaluate() call {self._calls} for {time.perf_counter() - started:.0f} s"
        group = self.algo.eval_env_runner_group
        runner = None if self.workers or group is None else group.local_env_runner
        envs = envs_activity(getattr(runner, "env", None))
        return doing + (f"; {envs}" if envs else "")

    def hold(self) -> None:
        feed = self.seeds.feed
        if self.pump is None or feed is None:
            return
        unstarted = self.pump.hold()
        give_back = getattr(feed, "give_back", None)
        if unstarted and give_back is not None:
            give_back(unstarted)

    def release(self) -> None:
        if self.pump is not None:
            self.pump.release()

    def _record(self, item: dict[str, Any]) -> EpisodeRecord:
        return EpisodeRecord(path=self.name, seed=item["seed"], block=item["block"], ret=item["return"],
                             length=item["length"], success=item["success"], invalid=item["invalid"] is not None,
                             reason=item["invalid"], wall_s=item["wall_s"], explore=self.explore)

    def close(self) -> None:
        LIVE_PATHS.pop(self.token, None)
        if self.pump is not None:
            self.pump.close()
        try:
            self.algo.stop()
        except Exception:  # closing after a failure: what is left of the runner may fail to stop
            pass


def restore_algorithm(algo_class, checkpoint: Path, config, env_name: str = GUARDED_ENV):
    """`Algorithm.from_checkpoint(path, config=config)` as it works for PPO: the Algorithm built with `config`,
    then the checkpoint's state restored into it.

    from_checkpoint hands `config` to the constructor only when the constructor's signature names it; SAC's
    `__init__(*args, **kwargs)` names nothing, so from_checkpoint silently keeps the checkpoint's own config
    (no evaluation runner, the raw env, episode units) for SAC (ray 2.60). Built this way every algorithm
    gets the config asked for; a config that still did not take is an error, not a run that never ends."""
    from tui_eval.integrations.rllib.compiler_imports import defer_compiler_imports

    defer_compiler_imports()  # ~1 s of torch's compiler imports that an evaluation never runs
    algo = algo_class(config=config)
    try:
        if algo.env_runner_group is None:
            # An offline algorithm (BC, MARWIL, CQL) has no training EnvRunners, and Algorithm.restore_from_path
            # then fails syncing weights to them (ray 2.60). Checkpointable's own restore (the learner group and
            # the evaluation runner) is the rest of it; evaluate() syncs the evaluation runner's weights itself.
            from ray.rllib.utils.checkpoints import Checkpointable

            Checkpointable.restore_from_path(algo, str(checkpoint))
        else:
            algo.restore_from_path(str(checkpoint))
        taken = algo.evaluation_config
        if taken.env != env_name or algo.config.evaluation_duration_unit != "timesteps":
            raise RuntimeError(f"{getattr(algo_class, '__name__', algo_class)} did not take the evaluation config "
                               f"(env {taken.env!r}, unit {algo.config.evaluation_duration_unit!r})")
    except BaseException:
        algo.stop()
        raise
    return algo


def _updated(evaluation_config, overrides: dict[str, Any]):
    """The user's `evaluation_config` (a dict or an AlgorithmConfig) with tui-eval's overrides on top."""
    if evaluation_config is None or isinstance(evaluation_config, dict):
        return {**(evaluation_config or {}), **overrides}
    return evaluation_config.copy(copy_frozen=False).update_from_dict(overrides)


def _episode_items(results: dict[str, Any]) -> list[dict[str, Any]]:
    runners = results.get("env_runners", results.get("evaluation", {}).get("env_runners", {}))
    items = runners.get(METRIC, [])
    return items if isinstance(items, list) else []
