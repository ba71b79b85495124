"""Seconds until a path in a process of its own is loaded and ready: forked from the zygote vs a fresh interpreter,
ratios from one run. What a path loaded afresh (a frozen world, a crash) and each replay of an exact proof wait for.

    python bench/bench_path_start.py [--rounds 3] [--checkpoint assets/ppo_cartpole]

Contenders (the `connectors` path of an RLlib checkpoint, in turns, the median of `--rounds`):
  forked   from the zygote, which imported torch, RLlib and gymnasium once before the first round (not timed)
  fresh    a new interpreter that imports them itself (TUI_EVAL_SPAWN_PATHS=1; target: forked <= 0.25x fresh)
CPU seconds are this process's children: what a start costs a machine whose cores are busy.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_eval.local_ray import prepare_environment  # noqa: E402

prepare_environment()

from tui_eval.cli import build_parser, spec_from_args  # noqa: E402
from tui_eval.isolation import process_path  # noqa: E402
from tui_eval.session import build_process_path, plan_run  # noqa: E402


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _start(plan, fork: bool) -> tuple[float, float]:
    process_path.FORKS = fork
    started, cpu = time.perf_counter(), _children_cpu()
    path = build_process_path(plan, "connectors", False)
    seconds = time.perf_counter() - started
    path.close()
    return seconds, _children_cpu() - cpu  # a forked child is the zygote's: its CPU is not counted here


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkpoint", type=Path, default=ROOT / "assets" / "ppo_cartpole")
    args = parser.parse_args()
    plan = plan_run(spec_from_args(build_parser().parse_args(
        [str(args.checkpoint), "--paths", "connectors,evaluate", "--log", str(Path(tempfile.mkdtemp()) / "b.sqlite")])))
    _start(plan, fork=True)  # the plan started the zygote: this waits for its imports, not timed
    seen: dict[str, list[float]] = {"forked": [], "fresh": []}
    cpu: dict[str, list[float]] = {"fresh": []}
    for _ in range(args.rounds):
        seen["forked"].append(_start(plan, fork=True)[0])
        seconds, used = _start(plan, fork=False)
        seen["fresh"].append(seconds)
        cpu["fresh"].append(used)
    forked_s, fresh_s = (statistics.median(seen[k]) for k in ("forked", "fresh"))
    print(f"path start, {args.checkpoint.name} connectors, median of {args.rounds} on {os.cpu_count()} cores")
    print(f"  forked from the zygote  {forked_s:6.2f} s")
    print(f"  fresh interpreter       {fresh_s:6.2f} s  ({statistics.median(cpu['fresh']):.1f} CPU s)")
    print(f"  forked / fresh          {forked_s / fresh_s:6.2f}x  (target <= 0.25x)")


if __name__ == "__main__":
    main()
