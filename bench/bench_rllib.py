"""Throughput of the RLlib paths, as ratios taken in one run (CartPole demo checkpoint by default).

    python bench/bench_rllib.py [--num-envs 8] [--episodes 100] [--rounds 3] [--checkpoint DIR] [--cpu-time]

--cpu-time times each contender by this process's CPU time instead of the wall clock: on a shared, busy
machine the in-process contenders (bare, connectors, generic, generic-rllib, envrunner) then compare on
what they cost, not on when the other processes took the cores. Not for evaluate / plain: Ray's own
processes are left out of it.

Contenders, all on the same envs count, explore off (discrete actions: greedy = argmax):
  bare        the same vector env + one RLModule forward per step + argmax, no bookkeeping at all (the
              deterministic sample of a Dict/Tuple action distribution; for a FrameStackingEnvToModule
              checkpoint, the last n frames kept in one array)
  connectors  tui-eval's `connectors` path (stock pipelines fused into batched calls)
  generic     the same with --generic-connectors: RLlib's episodes and both pipelines called on every step, as
              for a checkpoint with pieces of its own (PrevActionsPrevRewards, MeanStdFilter, ...), RLlib's
              stock pieces among them batched (env-to-module tail, module-to-env pipeline)
  generic-rllib  the same step by step with every piece RLlib's own, none batched (the reference)
  connectors-process, generic-process  `connectors` and `generic` in a process of their own, as a run places
              every path but one (tui_eval/isolation): seeds and records cross a socket (wall clock only)
  envrunner   RLlib's own SingleAgentEnvRunner.sample(num_episodes=N, explore=False) on the same module,
              restored connectors and guarded envs: what RLlib's pipelines and episodes cost in RLlib itself
  evaluate    tui-eval's `evaluate` path (Algorithm.evaluate() on a local evaluation EnvRunner), every one of
              the N seeds run to its end (the run's tail: envs idle while the last episodes finish)
  evaluate-first-n  the same path fed seeds without end and stopped once N episodes finished, the rule
              plain evaluate() stops by (episodes still running are dropped, as plain drops them). They
              finish uncounted at the start of the next round (plain resets its envs instead): with few
              long episodes per round (pixels) this understates the path.
  plain       a plain Algorithm.evaluate() call of the same number of episodes, on the same envs count: it
              stops at the first N episodes to finish, whichever they are (short ones finish first)
A recurrent checkpoint (e.g. `python -m tests.support.zoo_connectors DIR lstm`, then `--checkpoint DIR/lstm` from
the repository root): the bare loop carries the state rows itself, `generic` runs RLlib's state pieces.
Also `framestack`, `framestack_lstm` (FrameStackingEnvToModule writes the batch before the stock tail) and
`dict_act` (Dict actions, stock pipelines: step by step) from the same zoo.
Steps are counted for finished episodes only, for every contender. Targets: evaluate >= 0.9x plain,
connectors >= 0.9x bare, generic >= 0.6x bare.
"""

from __future__ import annotations

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

from common import ListFeed, interleaved, rllib_bench_options, run_title  # noqa: E402

CHECKPOINT = ROOT / "assets" / "ppo_cartpole"
SEED0 = 1_000_000_000


def bare_loop(kind, num_envs: int, episodes: int):
    import numpy as np
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

    from tui_eval.envs.guard import GuardedEnv
    from tui_eval.integrations.rllib.paths.layout import module_dir

    module = RLModule.from_checkpoint(str(module_dir(kind.checkpoint, kind.module_id)))
    module.eval()
    # The same vector env as the paths step (guarded sub-envs seeded from a feed), never idle.
    feed = ListFeed(range(SEED0, 2**31))
    env = kind.env.make_vec(num_envs, wrappers=[lambda e: GuardedEnv(e, feed=feed)])

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

    def run() -> int:
        obs, _ = env.reset()
        done_episodes = steps = 0
        lengths = np.zeros(num_envs, dtype=int)
        state = {k: v.clone() for k, v in initial.items()}
        obs = stack(obs, lengths == 0)
        while done_episodes < episodes:
            with torch.no_grad():
                logits, state = forward(obs, state)
            obs, _, terminated, truncated, _ = env.step(act(logits))
            obs = stack(obs, lengths < 0)
            for key in state:  # rows whose step was an autoreset start an episode
                state[key][lengths < 0] = initial[key][lengths < 0]
            lengths += 1
            for i in np.flatnonzero(terminated | truncated):
                steps += int(lengths[i])
                done_episodes += 1
            lengths[terminated | truncated] = -1  # the next step is the autoreset
        return steps

    return run


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


def env_runner_sample(kind, num_envs: int, episodes: int):
    """SingleAgentEnvRunner built from the checkpoint's config, its connectors and module restored."""
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

    def run() -> int:
        steps = sum(len(e) for e in runner.sample(num_episodes=episodes, explore=False))
        runner.get_metrics()  # as evaluate() reads them after each call (and the runner then lets them go)
        return steps

    return run


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


def path_runner(path, episodes: int):
    def run() -> int:
        records = []
        path.run(ListFeed(range(SEED0, SEED0 + episodes)), records.append)
        return sum(r.length for r in records)

    return run


class _FirstN:
    """Seeds without end, from a range of its own; cancelled once `episodes` of them have finished.
    Episodes a previous round left running finish uncounted (as plain evaluate() drops its unfinished)."""

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
    def run() -> int:
        feed = _FirstN(episodes)
        path.run(feed, feed.emit)
        return sum(feed.lengths)

    return run


def measure(checkpoint: Path, num_envs: int, episodes: int, rounds: int,
            env_config: dict | None = None, only: set[str] | None = None, cpu_time: bool = False) -> dict[str, float]:
    from tui_eval.config.spec import RunSpec
    from tui_eval.integrations.rllib.kind import RllibKind
    from tui_eval.session import share_cpu_threads

    share_cpu_threads(paths=2)  # as in a run of two paths; the same for every contender
    spec = dict(checkpoint=str(checkpoint), num_envs=num_envs, env_config=env_config or {})
    kind = RllibKind(checkpoint, RunSpec(**spec))
    generic_kind = RllibKind(checkpoint, RunSpec(**spec, kind_options={"generic_connectors": True}))
    makers = {  # built only when measured
        "bare": lambda: bare_loop(kind, num_envs, episodes),
        "connectors": lambda: path_runner(kind.build_path("connectors", explore=False), episodes),
        "generic": lambda: path_runner(generic_kind.build_path("connectors", explore=False), episodes),
        "generic-rllib": lambda: path_runner(_rllib_pieces_only(kind, num_envs), episodes),
        "connectors-process": lambda: path_runner(_in_own_process(spec), episodes),
        "generic-process": lambda: path_runner(
            _in_own_process(dict(spec, kind_options={"generic_connectors": True})), episodes),
        "envrunner": lambda: env_runner_sample(kind, num_envs, episodes),
        "evaluate": lambda: path_runner(kind.build_path("evaluate", explore=False), episodes),
        "evaluate-first-n": lambda: first_n_runner(kind.build_path("evaluate", explore=False), episodes),
        "plain": lambda: plain_evaluate(kind, num_envs, episodes),
    }
    contenders = {name: make() for name, make in makers.items() if not only or name in only}
    path_runner(kind.build_path("connectors", explore=False), num_envs)()  # warm-up
    return interleaved(contenders, rounds=rounds, clock=time.process_time if cpu_time else time.perf_counter)


def _in_own_process(spec: dict):
    """The connectors path in a process of its own, as a run starts it (one torch thread, as for two paths)."""
    import os

    from tui_eval.config.spec import RunSpec
    from tui_eval.isolation.process_path import ProcessPath

    return ProcessPath(RunSpec(**spec), "connectors", False, {"cwd": os.getcwd(), "threads": 1, "keep_apart": []})


def _rllib_pieces_only(kind, num_envs: int):
    from tui_eval.integrations.rllib.paths.connectors import RllibConnectorsPath

    return RllibConnectorsPath(checkpoint=kind.checkpoint, module_id=kind.module_id, recipe=kind.env,
                               num_envs=num_envs, device="cpu", explore=False, success_key=None, step_timeout=None,
                               rllib_pieces=True)


def report(title: str, rates: dict[str, float]) -> None:
    print(title)
    for name, rate in rates.items():
        print(f"  {name:<16} {rate:9.0f} env steps/s")
    ratios = [
        ("evaluate", "plain", "evaluate / plain Algorithm.evaluate()", "(target >= 0.9; every seed to its end)"),
        ("evaluate-first-n", "plain", "evaluate / plain, both stopped at the first N episodes", "(target >= 0.9)"),
        ("connectors", "bare", "connectors / bare", "(target >= 0.9)"),
        ("connectors-process", "bare", "connectors in a process of its own / bare", "(target >= 0.9)"),
        ("generic-process", "bare", "--generic-connectors in a process of its own / bare", "(target >= 0.6)"),
        ("connectors", "evaluate", "connectors / evaluate", ""),
        ("generic", "bare", "connectors --generic-connectors / bare", "(target >= 0.6)"),
        ("generic-rllib", "bare", "step by step, RLlib's pieces only / bare", ""),
        ("envrunner", "bare", "RLlib's SingleAgentEnvRunner.sample() / bare", "(RLlib's own loop and pipelines)"),
        ("generic", "envrunner", "connectors --generic-connectors / SingleAgentEnvRunner.sample()", ""),
        ("generic-rllib", "envrunner", "step by step, RLlib's pieces only / SingleAgentEnvRunner.sample()", ""),
    ]
    for a, b, label, note in ratios:
        if a in rates and b in rates:
            print(f"  {label} = {rates[a] / rates[b]:.2f}x  {note}".rstrip())


def main() -> None:
    args = rllib_bench_options(__doc__.splitlines()[0], episodes=100, checkpoint=CHECKPOINT,
                               only_example="evaluate,evaluate-first-n,plain")
    rates = measure(args.checkpoint.resolve(), args.num_envs, args.episodes, args.rounds, only=args.only,
                    cpu_time=args.cpu_time)
    report(run_title(args), rates)


if __name__ == "__main__":
    main()
