"""Wall time of `tui-eval diagnose` on the demo checkpoints, restore included, and the probes' share of it.

    python bench/bench_doctor.py [--rounds 1] [extra diagnose options ...]

Runs the CLI in a fresh process per checkpoint, as a user does: imports, reading the checkpoint, the
paths (RLlib: ray start and Algorithm.from_checkpoint for `evaluate`, the connectors path; rsl_rl: the
runner and its TorchScript export), a paired batch of 5 episodes per path, the live facts, the replay
of one seed, the counterfactual probes at the divergent step and the findings. Target: <= 15 s on 2
cores each. The probes' seconds come from the diagnosis itself (`replay.probes.seconds`), so their share
is a ratio taken in the same run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = {"ppo_pendulum": ROOT / "assets" / "ppo_pendulum",
               "rsl_pointgoal": ROOT / "assets" / "rsl_pointgoal" / "model_39.pt"}


def one(checkpoint: Path, argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, probe seconds, top finding) of one diagnose."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "d.json"
        started = time.perf_counter()
        command = [sys.executable, "-m", "tui_eval.cli", "diagnose", str(checkpoint), "--json", str(out), *argv]
        proc = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            sys.exit(f"diagnose {checkpoint} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        data = json.loads(out.read_text())
    lines = proc.stdout.splitlines()
    return wall, data["replay"].get("probes", {}).get("seconds", 0.0), lines[1] if len(lines) > 1 else ""


def main(argv: list[str]) -> None:
    rounds = 1
    if argv[:1] == ["--rounds"]:
        rounds, argv = int(argv[1]), argv[2:]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name, checkpoint in CHECKPOINTS.items():
        runs = [one(checkpoint, argv, env) for _ in range(rounds)]
        wall, probes, top = min(runs)
        print(f"tui-eval diagnose {name}: {wall:.1f} s wall (best of {rounds}; target <= 15 s), probes "
              f"{probes:.2f} s ({100 * probes / wall:.1f} % of it)")
        print(f"  top finding: {top or '(none: the paths do not diverge)'}")


if __name__ == "__main__":
    main(sys.argv[1:])
