"""Throughput of the RLlib paths on pixels: a PPO checkpoint on CarRacing-v3 behind a float32 wrapper
registered with tune.register_env (RLlib's default CNN encoder), ratios taken in one run.

    python bench/bench_pixels.py [--num-envs 4] [--episodes 8] [--max-steps 100] [--min-rounds 6] ...

The checkpoint is trained first, in a temporary folder, by the user-project script the tests use
(seconds). Same contenders and targets as bench_rllib.py.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "support"))

import bench_rllib  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=100, help="episode length (CarRacing's own is 1000)")
    from common import bench_options

    bench_options(parser, min_rounds=6, max_rounds=12, budget_s=300.0)
    args = parser.parse_args()
    args.only = None
    from user_checkpoints import PROJECT_SOURCE

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "checkpoints"
        subprocess.run([sys.executable, "train_user_checkpoints.py", str(out), "float_carracing"],
                       cwd=PROJECT_SOURCE, check=True, capture_output=True)
        checkpoint = out / "float_carracing"
        sys.path.insert(0, str(PROJECT_SOURCE))
        import my_rl_project  # noqa: F401  (registers FloatCarRacing-v0, as --import does)

        print(f"FloatCarRacing-v0 (CNN), {args.max_steps}-step episodes")
        bench_rllib.measure_phases(checkpoint, args, env_config={"max_steps": args.max_steps})

if __name__ == "__main__":
    main()
