"""Wall time of `tui-eval diagnose` on the demo checkpoints, restore included, and the probes' share of it.

    python bench/bench_doctor.py [--rounds 1] [extra diagnose options ...]

Runs the CLI in a fresh process per checkpoint, as a user does: imports, reading the checkpoint, the
paths (RLlib: ray start and Algorithm.from_checkpoint for `evaluate`, the connectors path; rsl_rl: the
runner and its TorchScript export), a paired batch of 5 episodes per path, the live facts, the replay
of one seed, the counterfactual probes at the divergent step and the findings. Target: <= 15 s on 2
cores each. Each phase is timed from the command's progress lines as they arrive; the probes' seconds
come from the diagnosis itself (`replay.probes.seconds`), so their share is a ratio taken in the same run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = {"ppo_pendulum": ROOT / "assets" / "ppo_pendulum",
               "rsl_pointgoal": ROOT / "assets" / "rsl_pointgoal" / "model_39.pt"}


#: the diagnose command's progress lines (stderr) that end each phase, and the phase they end
PHASES = (("tui-eval diagnose:", "start-up: imports, reading the checkpoint, Ray"),
          ("running ", "building the paths"), ("reading what", "paired batch"), ("replaying", "live facts"))


@dataclass
class Run:
    wall: float
    probes: float
    top: str
    phases: dict[str, float] = field(default_factory=dict)


def one(checkpoint: Path, argv: list[str], env: dict[str, str]) -> Run:
    """One diagnose in a fresh process, its stderr read as it comes to time each phase."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "d.json"
        started = time.perf_counter()
        command = [sys.executable, "-m", "tui_eval.cli", "diagnose", str(checkpoint), "--json", str(out), *argv]
        proc = subprocess.Popen(command, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None and proc.stdout is not None
        phases, last, err = {}, started, []
        for line in proc.stderr:
            err.append(line)
            for marker, phase in PHASES:
                if marker in line and phase not in phases:
                    now = time.perf_counter()
                    phases[phase], last = now - last, now
        stdout = proc.stdout.read()
        proc.wait()
        wall = time.perf_counter() - started
        phases["replay, probes, findings, exit"] = started + wall - last
        if proc.returncode != 0:
            sys.exit(f"diagnose {checkpoint} failed ({proc.returncode}): {''.join(err)[-2000:]}")
        data = json.loads(out.read_text())
    lines = stdout.splitlines()
    return Run(wall, data["replay"].get("probes", {}).get("seconds", 0.0), lines[1] if len(lines) > 1 else "", phases)


def main(argv: list[str]) -> None:
    rounds = 1
    if argv[:1] == ["--rounds"]:
        rounds, argv = int(argv[1]), argv[2:]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name, checkpoint in CHECKPOINTS.items():
        runs = [one(checkpoint, argv, env) for _ in range(rounds)]
        best = min(runs, key=lambda r: r.wall)
        print(f"tui-eval diagnose {name}: {best.wall:.1f} s wall (best of {rounds}; target <= 15 s), probes "
              f"{best.probes:.2f} s ({100 * best.probes / best.wall:.1f} % of it)")
        print("  " + ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in best.phases.items()))
        print(f"  top finding: {best.top or '(none: the paths do not diverge)'}")


if __name__ == "__main__":
    main(sys.argv[1:])
