"""Throughput of the RLlib paths on other algorithms' checkpoints, as ratios measured until narrow:

    python bench/bench_zoo.py [--algorithm sac] [--num-envs 8] [--episodes 32] [--checkpoint DIR] [--cpu-time]
                              [--min-rounds 8] [--max-rounds 40] [--width 0.02] [--budget 240]

Without --checkpoint, the algorithm's tiny zoo checkpoint (tests/support/zoo_checkpoints.py, one training iteration)
is trained first. Contenders as in bench_rllib.py (explore off), less `bare` (its argmax suits discrete
actions only): connectors, generic (--generic-connectors), envrunner, evaluate (also first-N), and a plain
Algorithm.evaluate() of the same number of episodes on the same envs count; measured as bench_rllib.py
measures (bench/common.py).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_rllib import measure_phases  # noqa: E402
from common import bench_options  # noqa: E402

CONTENDERS = {"connectors", "generic", "envrunner", "evaluate", "evaluate-first-n", "plain"}


def zoo_checkpoint(algorithm: str, out: Path) -> Path:
    script = ROOT / "tests" / "support" / "zoo_checkpoints.py"
    subprocess.run([sys.executable, str(script), str(out), algorithm], check=True, capture_output=True)
    return out / algorithm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="sac", help="a zoo checkpoint: ppo, appo, impala, dqn, sac")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--checkpoint", type=Path)
    bench_options(parser, budget_s=240.0)
    args = parser.parse_args()
    args.only = CONTENDERS
    label = f"checkpoint {args.checkpoint.name}" if args.checkpoint else f"{args.algorithm} (zoo checkpoint)"
    print(label)
    with tempfile.TemporaryDirectory(prefix="bench-zoo-") as tmp:
        checkpoint = (args.checkpoint or zoo_checkpoint(args.algorithm, Path(tmp))).resolve()
        measure_phases(checkpoint, args)

if __name__ == "__main__":
    main()
