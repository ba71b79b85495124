"""Env steps/s of tui-eval's mjlab paths against a bare loop of mjlab's own env and inference policy, 16 worlds, each
path in both placements, measured until each ratio's interval is narrow.

    python bench/bench_mjlab.py [--run RUN_FOLDER] [--task Mjlab-Cartpole-Balance] [--batches 2] [--cpu-time]
                                [--min-rounds 8] [--max-rounds 30] [--width 0.02] [--budget 480] [--slices 2]
                                [--processes 2]

The run: `--run` (an mjlab run folder), else a tiny one trained here by mjlab's own `train`
(tests/support/mjlab_run.py, ~20 s). Episodes last `--episode-s` seconds (cartpole balance ends every episode at
its time limit, so every contender does the same env steps).

- **bare**: what a user writes with mjlab alone: `ManagerBasedRlEnv` + `RslRlVecEnvWrapper`, the task's runner
  class with the checkpoint loaded, `get_inference_policy()`; per batch `env.seed(S)`, `env.reset()`, then the
  policy and `env.step` until the episodes end. No books kept.
- **runner**: tui-eval's `runner` path (`MjlabVecEnv`, records with termination and reward terms) on the same
  batches; **onnx**: its `onnx` path, the run's `<run>.onnx` (batch 1: one onnxruntime call per world and step).
- Placements: a default run hosts `runner` in its own process and starts `onnx` in a process of its own
  (tui_eval/session.py); both paths are measured in both places (`-process`: in a process of its own; `--processes`
  of them taking turns slice by slice, since one process runs a few percent faster or slower than another).

Rows, as placed first: runner (run's process) / bare, target >= 0.95, and onnx (its own process) / bare (reported:
onnxruntime at batch 1 is another policy call); then a path in its own process / the same path in the run's
process, target >= 0.97. How it measures: bench/common.py (shuffled rounds, each in `--slices` slices of whole
batches that the contenders take turns on (default: one batch a slice), a ratio per round, the 95% interval of its
median, wall and CPU time).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("MJLAB_WARP_QUIET", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import (  # noqa: E402
    Contender,
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

from tui_eval.config.spec import RunSpec, SeedBlock  # noqa: E402
from tui_eval.integrations.rsl_rl import warm_imports  # noqa: E402
from tui_eval.integrations.rsl_rl.mjlab.kind import MjlabKind  # noqa: E402

WORLDS = 16


def bare_loop(task: str, checkpoint: Path, episode_s: float):
    """play(batches): mjlab's env and inference policy (built once) on the batches' seeds."""
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper
    from mjlab.tasks.registry import load_env_cfg, load_rl_cfg, load_runner_cls

    cfg = load_env_cfg(task)
    cfg.scene.num_envs, cfg.episode_length_s = WORLDS, episode_s
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg=cfg, device="cpu"))
    runner = (load_runner_cls(task) or MjlabOnPolicyRunner)(env, asdict(load_rl_cfg(task)), device="cpu")
    runner.load(str(checkpoint), load_cfg={"actor": True}, strict=True, map_location="cpu")
    policy = runner.get_inference_policy(device="cpu")

    def play(batches: list[int]) -> None:
        with torch.inference_mode():
            for batch in batches:
                env.seed(batch)
                env.reset()
                obs = env.get_observations()
                done = torch.zeros(WORLDS, dtype=torch.bool)
                while not bool(done.all()):
                    obs, _, dones, _ = env.step(policy(obs))
                    done |= dones.bool()

    return play


def contenders(run: Path, task: str, episode_s: float, seeds: list[int], slices: int = 1,
               processes: int = 1) -> tuple[list[Contender], RunSpec]:
    """bare, runner, onnx, runner-process, onnx-process on the same seeds (in `slices` of whole batches: measure; a
    `-process` contender in `processes` processes taking turns)."""
    from tui_eval.feed import Heartbeat

    spec = RunSpec(checkpoint=str(run), env_id=task, env_config={"episode_length_s": episode_s}, num_envs=WORLDS,
                   seeds=SeedBlock(seeds[0], seeds[-1] + 1))
    kind = MjlabKind(run, spec)
    heartbeat = Heartbeat()  # a run's feeds carry the engine's; its envs note every step there
    warm = warm_imports(run) or ("torch", "gymnasium")
    checkpoint = sorted(run.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))[-1]
    built = [path_contender(name, kind.build_path(name, False), seeds, heartbeat, warm=WORLDS, slices=slices)
             for name in ("runner", "onnx")]
    built += [path_contender(f"{name}-process", PathProcesses(spec, name, warm, processes), seeds, heartbeat,
                             warm=WORLDS, slices=slices) for name in ("runner", "onnx")]
    steps = built[0].run()  # every contender plays the same episodes: the bare loop's steps are the runner's
    play = bare_loop(task, checkpoint, episode_s)
    parts = [bare_part(play, part, runner_part()) for part, runner_part in zip(in_slices(seeds, slices),
                                                                                built[0].parts)]
    batches = seeds[::WORLDS]
    return [Contender("bare", lambda: (play(batches), steps)[1], warm=lambda: play(batches[:1]), parts=parts),
            *built], spec


def bare_part(play, seeds, steps: int):
    """The bare loop on one slice's batches (whole ones: `main` checks), counted as the runner's steps on them."""
    return lambda: (play(list(seeds)[::WORLDS]), steps)[1]


def ratios(host: str) -> list[Ratio]:
    placed = f"as placed by a default run ({host} in the run's process, onnx in its own):"
    where = "placement: a path in its own process against the same path in the run's process"
    return [
        Ratio("runner", "bare", "runner (run's process) / bare", 0.95, placed),
        Ratio("onnx-process", "bare", "onnx (its own process) / bare", None, placed),
        Ratio("onnx-process", "onnx", "onnx: its own process / the run's process", 0.97, where),
        Ratio("runner-process", "runner", "runner: its own process / the run's process", 0.97, where),
        Ratio("runner-process", "bare", "runner (its own process) / bare", None, "the other placement:"),
        Ratio("onnx", "bare", "onnx (run's process) / bare", None, "the other placement:"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path)
    parser.add_argument("--task", default="Mjlab-Cartpole-Balance")
    parser.add_argument("--episode-s", type=float, default=5.0)
    # rounds of 2 batches (~20 s) in 480 s: enough of them (>= 8) for an interval of the median to mean something
    parser.add_argument("--batches", type=int, default=2, help="batches of 16 seeds per round")
    # a slice per batch: contenders ~2 s apart, not a whole round; a slice is a run call, which costs a path process
    # about what it costs a path in the run's process (docs/benchmarks.md)
    bench_options(parser, max_rounds=30, budget_s=480.0, slices=2, processes=2)
    args = parser.parse_args()
    if args.slices > 1 and args.batches % args.slices:
        parser.error(f"--slices {args.slices} must divide --batches {args.batches}: a slice plays whole batches")
    run = args.run
    if run is None:
        from tests.support.mjlab_run import train, write_onnx

        run = train(Path(tempfile.mkdtemp(prefix="bench-mjlab-")))
        write_onnx(run)
    start = 1_000_000_000
    seeds = list(range(start, start + WORLDS * args.batches))
    built, spec = contenders(run, args.task, args.episode_s, seeds, args.slices, args.processes)
    host, line = placement(MjlabKind(run, spec), spec)
    print(f"{args.task}, {WORLDS} worlds, {args.batches} batches per round; {THREADS}\n"
          f"a default run places its paths: {line}", flush=True)
    for contender in built:  # warm-up (a bare slice counts its steps)
        for play_once in (contender.run, *contender.parts):
            play_once()
    wanted = ratios(host)
    report(run_measure(built, wanted, args), wanted, clocks_of(args))


if __name__ == "__main__":
    main()
