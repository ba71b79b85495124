"""Throughput of the RLlib paths as ratios, measured until each ratio's interval is narrow (CartPole demo by default).

    python bench/bench_rllib.py [--num-envs 8] [--episodes 100] [--checkpoint DIR] [--only a,b] [--cpu-time]
                                [--min-rounds 8] [--max-rounds 40] [--width 0.02] [--budget 360] [--slices 8]
                                [--processes 3]

How it measures (bench/common.py): rounds of every contender once, in a new shuffled order each round, each round in
--slices slices that the contenders take turns on (the phase without Ray; whole rounds with Ray); a ratio per round;
rounds until every ratio's 95% interval of its median is within --width of it (or --max-rounds / --budget, per phase);
wall clock and CPU time (the thread that runs a contender, plus a path's own process and the thread here that reads its
records; this whole process for those Ray serves); threads as a run of two paths sets them; the share of the machine
other processes used per round; in whole rounds each contender without Ray plays 16 episodes untimed right before each
timed run (what another contender left in the caches is not its own). Two phases: the contenders that need no Ray first,
then Ray is started (its agents wake up now and then) for evaluate and plain. --cpu-time judges by CPU time (a busy
machine: wall times then say when others took the cores, CPU times what the contenders cost).

Contenders, all on the same envs count, explore off (discrete actions: greedy = argmax). Every contender but
`plain`, `evaluate-first-n` and `envrunner` plays the same --episodes seeds each round (the same episodes, the
same idle tail: an env with no seed left goes idle and the round ends once every env is idle):
  bare        the same vector env of guarded sub-envs + one RLModule forward per step + argmax, no bookkeeping
              (the deterministic sample of a Dict/Tuple action distribution; for a FrameStackingEnvToModule
              checkpoint, the last n frames kept in one array)
  connectors  tui-eval's `connectors` path (stock pipelines fused into batched calls) in this process, driven as
              a run drives it (a feed with the engine's heartbeat, the default --step-timeout)
  generic     the same with --generic-connectors: RLlib's episodes and both pipelines called on every step, as
              for a checkpoint with pieces of its own (PrevActionsPrevRewards, MeanStdFilter, ...), RLlib's
              stock pieces among them batched (env-to-module tail, module-to-env pipeline)
  generic-rllib  the same step by step with every piece RLlib's own, none batched (the reference)
  connectors-process, generic-process  `connectors` and `generic` in a process of their own, as a run places
              every path but one (tui_eval/isolation): seeds and records cross a socket; --processes of them,
              taking turns slice by slice (one process runs a few percent faster or slower than another)
  envrunner   RLlib's own SingleAgentEnvRunner.sample(num_episodes=N, explore=False) on the same module,
              restored connectors and guarded envs: what RLlib's pipelines and episodes cost in RLlib itself
  evaluate    tui-eval's `evaluate` path (Algorithm.evaluate() on a local evaluation EnvRunner), every one of
              the N seeds run to its end (the run's tail: envs idle while the last episodes finish)
  evaluate-first-n  the same path fed seeds without end and stopped once N episodes finished, the rule plain
              evaluate() stops by: episodes still running are dropped and the envs reset at the next round's
              start, as plain evaluate() resets them at each call
  plain       a plain Algorithm.evaluate() call of the same number of episodes, on the same envs count: it
              stops at the first N episodes to finish, whichever they are (short ones finish first)
Steps are counted for finished episodes only, for every contender. The as-placed rows come first: a default run
hosts `evaluate` in its own process and starts `connectors` in a process of its own (tui_eval/session.py), and the
bench prints the line a run prints. Targets there: connectors >= 0.95x bare, step by step >= 0.75x bare, a path in
its own process >= 0.97x the same path in the run's process, evaluate >= 0.95x plain (every seed to its end) and
>= 1.0x plain (first N).
A recurrent checkpoint (e.g. `python -m tests.support.zoo_connectors DIR lstm`, then `--checkpoint DIR/lstm` from
the repository root): the bare loop carries the state rows itself, `generic` runs RLlib's state pieces.
Also `framestack`, `framestack_lstm` (FrameStackingEnvToModule writes the batch before the stock tail) and
`dict_act` (Dict actions, stock pipelines: step by step) from the same zoo.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
warnings.filterwarnings("ignore")
from tui_eval.local_ray import prepare_environment  # noqa: E402

prepare_environment()

from common import (  # noqa: E402
    Contender,
    ListFeed,
    PathProcesses,
    Ratio,
    bench_options,
    clocks_of,
    in_slices,
    path_contender,
    path_round,
    pin_threads,
    placement,
    report,
    run_measure,
)

THREADS = pin_threads(paths=2)  # as a run of two paths sets them

CHECKPOINT = ROOT / "assets" / "ppo_cartpole"
SEED0 = 1_000_000_000
WARM = 16  # episodes played untimed right before each timed run of a contender that runs without Ray


def bare_loop(kind, num_envs: int):
    """play(seeds) -> env steps: the seeds (a round's, or a slice of them) played on the vector env by one forward +
    argmax per step, no books."""
    import numpy as np
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

    from tui_eval.envs.guard import IDLE_KEY, GuardedEnv
    from tui_eval.feed import FeedRelay
    from tui_eval.integrations.rllib.paths.layout import module_dir

    module = RLModule.from_checkpoint(str(module_dir(kind.checkpoint, kind.module_id)))
    module.eval()
    # The same vector env as the paths step (guarded sub-envs seeded from a feed): the same seeds, so the same
    # episodes and idle tail (an env with no seed left goes idle; the round ends once all are).
    relay = FeedRelay()
    env = kind.env.make_vec(num_envs, wrappers=[lambda e: GuardedEnv(e, feed=relay)])
    stateful = module.is_stateful()
    initial = {k: v.unsqueeze(0).repeat(num_envs, *([1] * v.dim())) for k, v in module.get_initial_state().items()} \
        if stateful else {}

    def forward(obs, state):
        """A recurrent module gets a time axis of one and its state rows (reset at an episode's start)."""
        tensor = torch.from_numpy(obs)
        if not stateful:
            return module._forward_inference({Columns.OBS: tensor})[Columns.ACTION_DIST_INPUTS], state
        out = module._forward_inference({Columns.OBS: tensor.unsqueeze(1), Columns.STATE_IN: state})
        return out[Columns.ACTION_DIST_INPUTS][:, 0], out[Columns.STATE_OUT]

    act, stack = _greedy_actions(module), _frame_stacker(kind, num_envs)

    def play(seeds) -> int:
        relay.feed = ListFeed(seeds)
        obs, infos = env.reset()
        steps = 0
        lengths = np.zeros(num_envs, dtype=int)
        state = {k: v.clone() for k, v in initial.items()}
        obs = stack(obs, lengths == 0)
        while not all(IDLE_KEY in info for info in infos):
            with torch.no_grad():
                logits, state = forward(obs, state)
            obs, _, terminated, truncated, infos = env.step(act(logits))
            obs = stack(obs, lengths < 0)
            for key in state:  # rows whose step was an autoreset start an episode
                state[key][lengths < 0] = initial[key][lengths < 0]
            lengths += 1
            done = terminated | truncated
            for i in np.flatnonzero(done):
                steps += int(lengths[i])
            lengths[done] = -1  # the next step is the autoreset
        return steps

    return play


def _greedy_actions(module):
    """Logits -> the env's actions: argmax for a categorical, else the deterministic sample of the module's
    distribution (a Dict/Tuple of them for structured actions), as numpy."""
    import tree
    from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical

    dist_class = module.get_inference_action_dist_cls()
    if dist_class is TorchCategorical:
        return lambda logits: logits.argmax(-1).numpy()
    return lambda logits: tree.map_structure(lambda t: t.numpy(),
                                             dist_class.from_logits(logits).to_deterministic().sample())


def _frame_stacker(kind, num_envs: int):
    """(obs, fresh rows) -> what the module sees: the observations as they are, or, for a checkpoint with
    FrameStackingEnvToModule, its last n frames along the channel axis (zeros before an episode's first)."""
    import numpy as np
    from ray.rllib.connectors.env_to_module import EnvToModulePipeline

    from tui_eval.integrations.rllib.paths.layout import connector_dir

    pipeline = EnvToModulePipeline.from_checkpoint(str(connector_dir(kind.checkpoint, "env_to_module")))
    n = next((p.num_frames for p in pipeline.connectors if type(p).__name__ == "FrameStacking"), 0)
    if not n:
        return lambda obs, fresh: obs
    frames: list = []

    def stack(obs, fresh):
        if not frames:
            frames.append(np.zeros((num_envs, *obs.shape[1:-1], n), obs.dtype))
        stacked = frames[0]
        stacked[..., :-1] = stacked[..., 1:].copy()
        stacked[fresh] = 0
        stacked[..., -1] = obs[..., 0]
        return stacked

    return stack


def _bench_env_creator(env_context):
    """The bench's env for RLlib's own EnvRunner: the kind's env behind a GuardedEnv, as the paths step it."""
    from tui_eval.envs.guard import GuardedEnv

    return GuardedEnv(_BENCH_ENV["recipe"].make_one(env_context, env_checker=False), feed=_BENCH_ENV["feed"])


_BENCH_ENV: dict = {}


def env_runner_sample(kind, num_envs: int):
    """play(episodes) -> env steps: SingleAgentEnvRunner built from the checkpoint's config, its connectors and
    module restored, sampling that many episodes."""
    from ray.rllib.core.rl_module.rl_module import RLModule
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
    from ray.tune.registry import register_env

    from tui_eval.integrations.rllib.paths.layout import module_dir

    _BENCH_ENV.update(recipe=kind.env, feed=ListFeed(range(SEED0, 2**31)))
    register_env("tui_eval_bench_guarded", _bench_env_creator)
    config = (kind.config.copy(copy_frozen=False).environment("tui_eval_bench_guarded", env_config={})
              .env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs, explore=False))
    runner = SingleAgentEnvRunner(config=config)
    runner.restore_from_path(str(kind.checkpoint / "env_runner"))
    runner.module.set_state(RLModule.from_checkpoint(str(module_dir(kind.checkpoint, kind.module_id)))
                            .get_state(inference_only=True))

    def play(episodes: int) -> int:
        steps = sum(len(e) for e in runner.sample(num_episodes=episodes, explore=False))
        runner.get_metrics()  # as evaluate() reads them after each call (and the runner then lets them go)
        return steps

    return play


def plain_evaluate(kind, num_envs: int, episodes: int):
    """What a user writes: restore the Algorithm, evaluate N episodes on a local evaluation runner."""
    config = (kind.config.copy(copy_frozen=False)
              .environment(env_config=kind.env.env_config)  # as the paths run it (--env-config included)
              .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
              .evaluation(evaluation_interval=1, evaluation_num_env_runners=0, evaluation_duration=episodes,
                          evaluation_duration_unit="episodes",
                          evaluation_config={"num_envs_per_env_runner": num_envs, "explore": False})
              .callbacks(on_episode_end=_count_steps))
    # Algorithm.from_checkpoint(path, config=config) drops `config` for SAC (its __init__ takes *args): build
    # with the config, then restore, as from_checkpoint does for the others.
    algo = kind.algo_class(config=config)
    algo.restore_from_path(str(kind.checkpoint))

    def run() -> int:
        _FINISHED_STEPS.clear()
        algo.evaluate()
        return sum(_FINISHED_STEPS)

    return run


_FINISHED_STEPS: list[int] = []


def _count_steps(*, episode, prev_episode_chunks=(), **kwargs) -> None:
    _FINISHED_STEPS.append(len(episode) + sum(len(c) for c in prev_episode_chunks))


def round_seeds(episodes: int) -> range:
    """The seeds of a round: the same every round and for every contender fed seeds (the same episodes)."""
    return range(SEED0, SEED0 + episodes)


def path_runner(path, episodes: int, heartbeat=None):
    """run() -> env steps of the round's seeds on `path`; `heartbeat`: the engine's, as a run drives the path."""
    return path_round(path, round_seeds(episodes), heartbeat)


class _FirstN:
    """Seeds without end, from a range of its own; cancelled once `episodes` of them have finished."""

    heartbeat = None
    rounds = 0

    def __init__(self, episodes: int):
        _FirstN.rounds += 1
        start = SEED0 + 10_000_000 * _FirstN.rounds
        self.start, self.seeds, self.episodes, self.lengths = start, iter(range(start, 2**31)), episodes, []

    @property
    def cancelled(self) -> bool:
        return len(self.lengths) >= self.episodes

    def take(self):
        return None if self.cancelled else (next(self.seeds), 0)

    def emit(self, record) -> None:
        if record.seed >= self.start:
            self.lengths.append(record.length)


def first_n_runner(path, episodes: int):
    """The evaluate path under plain evaluate()'s rule: stopped once N episodes finished, the episodes still
    running dropped; its envs reset at the next round's start, as plain evaluate() resets them at each call."""
    def run() -> int:
        path.algo.eval_env_runner._needs_initial_reset = True  # RLlib's flag: reset envs and episodes first
        feed = _FirstN(episodes)
        path.run(feed, feed.emit)
        return sum(feed.lengths)

    return run


def _rllib_pieces_only(kind, num_envs: int):
    from tui_eval.integrations.rllib.paths.connectors import RllibConnectorsPath

    return RllibConnectorsPath(checkpoint=kind.checkpoint, module_id=kind.module_id, recipe=kind.env,
                               num_envs=num_envs, device="cpu", explore=False, success_key=None, step_timeout=None,
                               rllib_pieces=True)


def with_ray(name: str, run) -> Contender:
    """A contender whose work Ray's threads in this process share: its CPU is this whole process's."""
    return Contender(name, run, cpu=time.process_time)


PHASES = {  # contenders measured together; Ray is started only for the second phase (its agents add noise)
    "without Ray": ("bare", "connectors", "connectors-process", "generic", "generic-process", "generic-rllib",
                    "envrunner"),
    "with Ray": ("evaluate", "evaluate-first-n", "plain"),
}


def contenders(phase: str, kind, generic_kind, spec: dict, num_envs: int, episodes: int, only,
               slices: int = 1, processes: int = 1) -> list[Contender]:
    from tui_eval.config.spec import RunSpec
    from tui_eval.feed import Heartbeat
    from tui_eval.integrations.rllib import warm_imports

    heartbeat = Heartbeat()  # a run's feeds carry the engine's; its envs note every step there
    seeds = round_seeds(episodes)
    warm = warm_imports(kind.checkpoint) or ("torch", "gymnasium")

    def placed(name: str, path) -> Contender:
        return path_contender(name, path, seeds, heartbeat, warm=WARM, slices=slices)

    def bare() -> Contender:
        play = bare_loop(kind, num_envs)
        return Contender("bare", lambda: play(seeds), warm=lambda: play(round_seeds(WARM)),
                         parts=[lambda part=part: play(part) for part in in_slices(seeds, slices)])

    def envrunner() -> Contender:
        play = env_runner_sample(kind, num_envs)
        return Contender("envrunner", lambda: play(episodes), warm=lambda: play(WARM),
                         parts=[lambda part=part: play(len(part)) for part in in_slices(seeds, slices)])

    makers = {  # built only when measured
        "bare": bare,
        "connectors": lambda: placed("connectors", kind.build_path("connectors", explore=False)),
        "generic": lambda: placed("generic", generic_kind.build_path("connectors", explore=False)),
        "generic-rllib": lambda: placed("generic-rllib", _rllib_pieces_only(kind, num_envs)),
        "connectors-process": lambda: placed("connectors-process", PathProcesses(RunSpec(**spec), "connectors", warm,
                                                                                 processes)),
        "generic-process": lambda: placed("generic-process", PathProcesses(
            RunSpec(**spec, kind_options={"generic_connectors": True}), "connectors", warm, processes)),
        "envrunner": envrunner,
        "evaluate": lambda: with_ray("evaluate", path_round(kind.build_path("evaluate", explore=False), seeds,
                                                             heartbeat)),
        "evaluate-first-n": lambda: with_ray("evaluate-first-n", first_n_runner(
            kind.build_path("evaluate", explore=False), episodes)),
        "plain": lambda: with_ray("plain", plain_evaluate(kind, num_envs, episodes)),
    }
    return [makers[name]() for name in PHASES[phase] if not only or name in only]


OTHER = "the other placement, and RLlib's own loop:"


def ratios(host: str) -> list[Ratio]:
    """Every ratio, those of the paths as a default run places them first (`host` runs in the run's process)."""
    own = "connectors-process" if host == "evaluate" else "connectors"
    placed = f"as placed by a default run ({host or 'none'} in the run's process, the other path in its own):"
    return [
        Ratio(own, "bare", "connectors / bare", 0.95, placed),
        Ratio(own.replace("connectors", "generic"), "bare", "step by step (--generic-connectors) / bare", 0.75,
              placed),
        Ratio("evaluate", "plain", "evaluate / plain Algorithm.evaluate(), every seed to its end", 0.95, placed),
        Ratio("evaluate-first-n", "plain", "evaluate / plain, both stopped at the first N episodes", 1.0, placed),
        Ratio("connectors-process", "connectors", "connectors: its own process / the run's process", 0.97,
              "placement: a path in its own process against the same path in the run's process"),
        Ratio("generic-process", "generic", "step by step: its own process / the run's process", 0.97,
              "placement: a path in its own process against the same path in the run's process"),
        Ratio("connectors", "bare", "connectors in the run's process / bare", None, OTHER),
        Ratio("generic", "bare", "step by step in the run's process / bare", None, OTHER),
        Ratio("generic-rllib", "bare", "step by step, RLlib's pieces only / bare", None, OTHER),
        Ratio("envrunner", "bare", "RLlib's SingleAgentEnvRunner.sample() / bare", None, OTHER),
        Ratio("generic", "envrunner", "step by step / SingleAgentEnvRunner.sample()", None, OTHER),
    ]


def measure_phases(checkpoint: Path, args, env_config: dict | None = None) -> None:
    """Build each phase's contenders, warm them up, measure, report."""
    from tui_eval.config.spec import RunSpec
    from tui_eval.integrations.rllib.kind import RllibKind

    spec = dict(checkpoint=str(checkpoint), num_envs=args.num_envs, env_config=env_config or {})
    kind = RllibKind(checkpoint, RunSpec(**spec))
    generic_kind = RllibKind(checkpoint, RunSpec(**spec, kind_options={"generic_connectors": True}))
    host, line = placement(kind, RunSpec(checkpoint=str(checkpoint)))
    wanted = ratios(host)
    print(f"{checkpoint.name}, {args.num_envs} envs, the same {args.episodes} seeds per round, explore off; {THREADS}"
          f"\na default run places its paths: {line}", flush=True)
    for index, phase in enumerate(PHASES):
        built = contenders(phase, kind, generic_kind, spec, args.num_envs, args.episodes, args.only, args.slices,
                           args.processes)
        if not built:
            continue
        for contender in built:  # warm-up: first calls import, compile, fill caches
            contender.run()
        print(f"{phase}: {', '.join(c.name for c in built)}", flush=True)
        measured = run_measure(built, wanted, args, seed=index)
        report(measured, wanted, clocks_of(args))
        same_work(measured)


def same_work(measured) -> None:
    """Contenders fed the round's seeds play the same episodes: say so if their steps differ."""
    fed = {name: {s.steps for s in samples} for name, samples in measured.samples.items()
           if samples and name not in ("plain", "evaluate-first-n", "envrunner")}
    if len({steps for seen in fed.values() for steps in seen}) > 1:
        print(f"  note: contenders fed the same seeds took different env steps: {fed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=100, help="seeds per round (a default run plays 100)")
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    parser.add_argument("--only", help="comma-separated contenders, e.g. evaluate,evaluate-first-n,plain")
    bench_options(parser, budget_s=360.0, slices=8, processes=3)
    args = parser.parse_args()
    args.only = set(args.only.split(",")) if args.only else None
    measure_phases(args.checkpoint.resolve(), args)


if __name__ == "__main__":
    main()
