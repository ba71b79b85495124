"""A prepared check for a maintainer with a GPU: the rsl_rl runner on CUDA against its ONNX export on onnxruntime's
CPU (as deployed), at 64 and 4,096 worlds. Prints, per size, the verdict line (SAME POLICY or IDENTICAL expected,
never DIFFER (exact)), the agreement, the noise floor and each path's env steps/s.

    python bench/bench_gpu_same_policy.py [CHECKPOINT] [--episodes-per-world K]

CHECKPOINT defaults to the bundled PointGoal demo (a Gymnasium env: its worlds step on the CPU); an mjlab run folder
(with `--env TASK` after `--`) steps its worlds on the GPU too. docs/benchmarks.md shows its output once run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_size(checkpoint: str, worlds: int, episodes: int, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "summary.json"
        proc = subprocess.run([sys.executable, "-m", "tui_eval.cli", checkpoint, "--paths", "runner,onnx",
                               "--device", "cuda", "--num-envs", str(worlds), "--headless", "--episodes",
                               str(episodes), "--json", str(out), "--log", str(Path(folder) / "run.sqlite"), *extra],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            sys.exit(f"{worlds} worlds: exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}")
        verdict = next((line for line in proc.stdout.splitlines() if line.startswith("verdict:")), "verdict: ?")
        return {"verdict": verdict, "summary": json.loads(out.read_text())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", nargs="?", default=str(ROOT / "assets" / "rsl_pointgoal" / "model_39.pt"))
    parser.add_argument("--episodes-per-world", type=int, default=2)
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="more run options after --")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("no CUDA device here: this check needs one")
    extra = [a for a in args.extra if a != "--"]
    print(f"{'worlds':>7}  {'max |Δaction|':>13}  {'floor':>10}  {'runner steps/s':>14}  {'onnx steps/s':>12}  verdict")
    for worlds in (64, 4096):
        got = one_size(args.checkpoint, worlds, worlds * args.episodes_per_world, extra)
        summary = got["summary"]
        comparison = summary["comparison"]
        agreement, floor = comparison.get("agreement") or {}, comparison.get("noise_floor") or {}
        paths = summary["paths"]
        print(f"{worlds:>7}  {agreement.get('max_abs', float('nan')):>13.2g}  {floor.get('diff_spread', 0.0):>10.3g}  "
              f"{paths['runner']['env_steps_per_s']:>14.0f}  {paths['onnx']['env_steps_per_s']:>12.0f}  "
              f"{got['verdict']}")


if __name__ == "__main__":
    main()
