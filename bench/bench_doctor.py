"""Wall time of `tui-eval diagnose` on the continuous-action demo checkpoint (Pendulum), restore included.

    python bench/bench_doctor.py [--rounds 1] [extra diagnose options ...]

Runs the CLI in a fresh process, as a user does: imports, reading the checkpoint, ray start and
Algorithm.from_checkpoint (path `evaluate`), the connectors path, a paired batch of 5 episodes per path,
the live facts, the replay of one seed and the findings. Target: <= 15 s on 2 cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> None:
    rounds = 1
    if argv[:1] == ["--rounds"]:
        rounds, argv = int(argv[1]), argv[2:]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    times = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            command = [sys.executable, "-m", "tui_eval.cli", "diagnose", str(ROOT / "assets" / "ppo_pendulum"),
                       "--json", str(Path(tmp) / "d.json"), *argv]
            proc = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True)
            times.append(time.perf_counter() - started)
        if proc.returncode != 0:
            sys.exit(f"diagnose failed ({proc.returncode}): {proc.stderr[-2000:]}")
    first = proc.stdout.splitlines()[1] if len(proc.stdout.splitlines()) > 1 else proc.stdout.strip()
    print(f"tui-eval diagnose ppo_pendulum: {min(times):.1f} s wall (best of {rounds}; target <= 15 s)")
    print(f"  top finding: {first}")


if __name__ == "__main__":
    main(sys.argv[1:])
