"""Throughput of the RLlib paths on other algorithms' checkpoints, as ratios taken in one run:

    python bench/bench_zoo.py [--algorithm sac] [--num-envs 8] [--episodes 32] [--rounds 3] [--checkpoint DIR]
                              [--cpu-time]

Without --checkpoint, the algorithm's tiny zoo checkpoint (tests/support/zoo_checkpoints.py, one training iteration)
is trained first. Contenders as in bench_rllib.py (explore off), less `bare` (its argmax suits discrete
actions only): connectors, generic (--generic-connectors), evaluate, and a plain Algorithm.evaluate() of the
same number of episodes on the same envs count.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_rllib import measure, report  # noqa: E402

CONTENDERS = {"connectors", "generic", "evaluate", "envrunner", "plain"}


def zoo_checkpoint(algorithm: str, out: Path) -> Path:
    script = ROOT / "tests" / "support" / "zoo_checkpoints.py"
    subprocess.run([sys.executable, str(script), str(out), algorithm], check=True, capture_output=True)
    return out / algorithm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="sac", help="a zoo checkpoint: ppo, appo, impala, dqn, sac")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkpoint", type=Path)
    parser.add_argument("--cpu-time", action="store_true", help="time by this process's CPU time (bench_rllib.py)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-zoo-") as tmp:
        checkpoint = (args.checkpoint or zoo_checkpoint(args.algorithm, Path(tmp))).resolve()
        rates = measure(checkpoint, args.num_envs, args.episodes, args.rounds, only=CONTENDERS, cpu_time=args.cpu_time)
    label = f"checkpoint {checkpoint.name}" if args.checkpoint else f"{args.algorithm} (zoo checkpoint)"
    report(f"{label}, {args.num_envs} envs, {args.episodes} episodes per round, "
           f"median of {args.rounds} interleaved rounds, explore off", rates)
    if "plain" in rates:
        for name in ("connectors", "generic", "evaluate", "envrunner"):
            if name in rates:
                print(f"  {name} / plain Algorithm.evaluate() = {rates[name] / rates['plain']:.2f}x")


if __name__ == "__main__":
    main()
