"""Env steps/s of the rsl_rl paths `runner` and `jit` against a bare loop, at 64 worlds, on three policies, each path
in both placements, measured until each ratio's interval is narrow.

    python bench/bench_rsl.py [--num-envs 64] [--episodes N] [--only mlp,lstm,pandareach] [--cpu-time]
                              [--min-rounds 8] [--max-rounds 30] [--width 0.02] [--budget 180] [--slices 1]
                              [--processes 3]

Policies: the bundled PointGoal-v0 demo (MLP), an LSTM actor on PointGoal-v0 (trained for one iteration here: its
speed, not its skill, is measured) and the bundled PandaReach-v3 demo (PyBullet). The bare loop steps the same VecEnv
(tui-eval's Gymnasium adapter) through the same seeds with the same actor forward (the runner's inference policy,
resp. the TorchScript export) and keeps no books: no returns, no records; for the recurrent actor it resets the state
of the worlds that are done, as rsl_rl's play loop does (`policy.reset(dones)`; the export's state rows zeroed). The
same seeds give the same episodes, so every contender does the same env steps.

Placements: a default run hosts `runner` in its own process and starts `jit` in a process of its own
(tui_eval/session.py); both paths are measured in both places. Contenders per policy: bare-runner, runner,
runner-process, bare-jit, jit, jit-process (`--processes` processes taking turns round by round: one process runs a
few percent faster or slower than another). Rows, as placed first: runner (run's process) / bare and jit (its own
process) / bare, target >= 0.95; then a path in its own process / the same path in the run's process, target >=
0.97; then the other placement / bare. How it measures: bench/common.py (shuffled rounds, or with --slices N each in N
slices that the contenders take turns on, a ratio per round, the 95% interval of its median, wall and CPU time, --budget
seconds per policy at most).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "bench"))  # bench/common.py, not tests/support/common.py

from common import (  # noqa: E402
    Contender,
    ListFeed,
    PathProcesses,
    Ratio,
    bench_options,
    clocks_of,
    in_slices,
    path_contender,
    pin_threads,
    placement,
    report,
    run_measure,
)

THREADS = pin_threads(paths=2)  # as a run of two paths sets them

import torch  # noqa: E402

from tui_eval.config.spec import RunSpec  # noqa: E402
from tui_eval.integrations.rsl_rl import warm_imports  # noqa: E402
from tui_eval.integrations.rsl_rl.kind import RslRlKind  # noqa: E402

SEED0 = 3_000_000_000
WARM = 128  # seeds played untimed right before each timed run (bench/common.py: warm before timed)


def bare(env, forward, reset, seeds):
    """run(): the same VecEnv and policy forward, no bookkeeping (`reset(dones)`: a recurrent policy's episode
    starts)."""
    def run() -> None:
        obs = env.begin(ListFeed(seeds))
        with torch.inference_mode():
            if reset is not None:
                reset(None)
            while env.busy:
                obs, _, dones, _ = env.step(forward(obs))
                if reset is not None:
                    reset(dones)
        env.end()

    return run


def bare_policies(runner, jit):
    """(forward, reset) of the runner's policy and of the TorchScript module, as a user's own loop calls them."""
    policy, module, groups = runner.policy, jit.module, jit.groups
    state = list(jit.memory.names)

    def jit_reset(dones):
        for name in state:
            if dones is None:
                getattr(module, name).zero_()
            else:
                getattr(module, name)[:, dones] = 0.0

    recurrent = runner.recurrent
    return {
        "runner": (lambda obs: policy(obs), policy.reset if recurrent else None),
        "jit": (lambda obs: module(torch.cat([obs[g] for g in groups], dim=-1)), jit_reset if recurrent else None),
    }


def lstm_checkpoint(folder: Path) -> Path:
    from rsl_train import recurrent_cfg, train

    return train(folder, recurrent_cfg("lstm", hidden=64), "PointGoal-v0", iterations=1, num_envs=8)


def policy_spec(name: str, folder: Path, num_envs: int) -> tuple[Path, RunSpec, str]:
    if name == "mlp":
        checkpoint = sorted((ROOT / "assets" / "rsl_pointgoal").glob("model_*.pt"))[-1]
        return checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=num_envs), "MLP, PointGoal-v0"
    if name == "lstm":
        checkpoint = lstm_checkpoint(folder)
        spec = RunSpec(checkpoint=str(checkpoint), num_envs=num_envs, env_id="PointGoal-v0")
        return checkpoint, spec, "LSTM 64, PointGoal-v0"
    checkpoint = sorted((ROOT / "assets" / "rsl_pandareach").glob("model_*.pt"))[-1]
    return checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=num_envs), "MLP, PandaReach-v3"


def contenders(checkpoint: Path, spec: RunSpec, episodes: int, slices: int = 1, processes: int = 1) -> list[Contender]:
    """bare-runner, runner, runner-process, bare-jit, jit, jit-process on the same seeds (in `slices`: measure; a
    `-process` contender in `processes` processes taking turns)."""
    from tui_eval.feed import Heartbeat

    kind = RslRlKind(checkpoint, spec)
    seeds = range(SEED0, SEED0 + episodes)
    heartbeat = Heartbeat()  # a run's feeds carry the engine's; its envs note every step there
    warm = warm_imports(checkpoint) or ("torch", "gymnasium")
    paths = {name: kind.build_path(name, False) for name in ("runner", "jit")}
    forwards = bare_policies(paths["runner"], paths["jit"])
    built = []
    for name, path in paths.items():
        parts = [counted(bare(path.env, *forwards[name], part), path, part) for part in in_slices(seeds, slices)]
        built.append(Contender(f"bare-{name}", counted(bare(path.env, *forwards[name], seeds), path, seeds),
                               warm=bare(path.env, *forwards[name], seeds[:WARM]), parts=parts))
        built.append(path_contender(name, path, seeds, heartbeat, warm=WARM, slices=slices))
        built.append(path_contender(f"{name}-process", PathProcesses(spec, name, warm, processes), seeds, heartbeat,
                                    warm=WARM, slices=slices))
    return built


def counted(run_bare, path, seeds):
    """The bare loop's env steps: those the same seeds take on the path (the same episodes), counted once."""
    steps: list[int] = []

    def run() -> int:
        run_bare()
        if not steps:
            records: list = []
            path.run(ListFeed(seeds), records.append)
            steps.append(sum(r.length for r in records))
        return steps[0]

    return run


def ratios(host: str) -> list[Ratio]:
    export = "jit"
    placed = f"as placed by a default run ({host} in the run's process, {export} in its own):"
    where = "placement: a path in its own process against the same path in the run's process"
    other = "the other placement:"
    return [
        Ratio("runner", "bare-runner", "runner (run's process) / bare", 0.95, placed),
        Ratio("jit-process", "bare-jit", "jit (its own process) / bare", 0.95, placed),
        Ratio("jit-process", "jit", "jit: its own process / the run's process", 0.97, where),
        Ratio("runner-process", "runner", "runner: its own process / the run's process", 0.97, where),
        Ratio("runner-process", "bare-runner", "runner (its own process) / bare", None, other),
        Ratio("jit", "bare-jit", "jit (run's process) / bare", None, other),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--episodes", type=int, default=None,
                        help="seeds per round (default: 4,096 for the MLP, whose episodes take ~8 steps, else 1,024)")
    parser.add_argument("--only", default="mlp,lstm,pandareach")
    # LSTM and PandaReach rounds are long (8 in ~150 s); whole rounds by default: slices cost a path process a call
    # each, which lowered its ratios by ~3 % on the MLP (docs/benchmarks.md), and whole rounds resolve ±2 % here
    bench_options(parser, max_rounds=30, budget_s=180.0, slices=1, processes=3)
    args = parser.parse_args()
    print(f"{args.num_envs} worlds; {THREADS}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        for index, name in enumerate(args.only.split(",")):
            checkpoint, spec, label = policy_spec(name, Path(folder) / name, args.num_envs)
            host, line = placement(RslRlKind(checkpoint, spec), spec)
            print(f"{label}; a default run places its paths: {line}", flush=True)
            episodes = args.episodes or (4096 if name == "mlp" else 1024)  # a round of the MLP at 1,024: ~0.2 s
            print(f"  the same {episodes} seeds per round", flush=True)
            built = contenders(checkpoint, spec, episodes, args.slices, args.processes)
            for contender in built:  # warm-up: first calls compile and fill caches (a bare slice counts its steps)
                for run in (contender.run, *contender.parts):
                    run()
            wanted = ratios(host)
            started = time.perf_counter()
            report(run_measure(built, wanted, args, seed=index), wanted, clocks_of(args))
            print(f"  ({time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
