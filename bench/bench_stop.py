"""Seconds until things that must be prompt are done: the figures the tests leave out (they assert what happens,
with generous bounds at most, as a busy machine makes any timing flaky).

    python bench/bench_stop.py [--rounds 3]

Contenders (the median of `--rounds`):
  stuck stop    engine.stop() + close() of a run whose two paths, each in a process of its own, are stuck in an
                env step that never returns (FreezingCartPole): until both processes ended (target <= 10 s;
                tests/integration/rllib/test_seeds_are_promises.py asserts < 30 s)
  bad output    `tui-eval CKPT --headless --log /proc/x.out`: from the command to its exit 2, an interpreter's
                start and nothing loaded (target <= 3 s)
  rsl cancel    the rsl_rl demo's runner path, cancelled once 3 seeds are taken: until run() returns
                (target <= 0.5 s)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_eval.local_ray import prepare_environment  # noqa: E402

prepare_environment()

from tests.support.common import CARTPOLE, wait_until  # noqa: E402
from tests.support.engines import plan_for  # noqa: E402
from tui_eval.session import start_engine  # noqa: E402


def stuck_stop(tmp: Path) -> float:
    frozen = tmp / "frozen"
    frozen.unlink(missing_ok=True)
    os.environ["TUI_EVAL_TEST_FREEZE_MARK"] = str(frozen)
    engine = start_engine(plan_for(CARTPOLE, "--env", "tests.support.fault_envs:FreezingCartPole-v0", "--paths",
                                   "connectors,evaluate", "--explore", "evaluate=off", "--num-envs", "2",
                                   log=tmp / f"run-{time.monotonic_ns()}.sqlite", own_processes=True))
    engine.start()
    wait_until(frozen.exists, timeout=300)
    processes = [p._process for p in engine.paths.values()]
    started = time.monotonic()
    engine.stop()
    engine.close()
    took = time.monotonic() - started
    assert all(p.poll() is not None for p in processes)
    return took


def bad_output(tmp: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tui_eval.cli", str(CARTPOLE), "--headless", "--log", "/proc/x.out"],
                          cwd=tmp, env=env, capture_output=True, text=True)
    took = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    return took


def rsl_cancel(tmp: Path) -> float:
    from tests.support.rsl import ListFeed, demo_checkpoint
    from tui_eval.config.spec import RunSpec
    from tui_eval.integrations.rsl_rl.kind import RslRlKind

    checkpoint = demo_checkpoint()
    kind = RslRlKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=6))
    path = kind.build_path("runner", False)
    try:
        started = time.monotonic()
        path.run(ListFeed(range(10_000, 10_100), cancel_after=3), lambda record: None)
        return time.monotonic() - started
    finally:
        path.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for name, measure in (("stuck stop", stuck_stop), ("bad output", bad_output), ("rsl cancel", rsl_cancel)):
            seconds = [measure(tmp) for _ in range(args.rounds)]
            print(f"{name:<12} median {statistics.median(seconds):6.2f} s   "
                  f"(rounds: {', '.join(f'{s:.2f}' for s in seconds)})", flush=True)
    from tests.support import fault_envs

    fault_envs.RELEASE_FROZEN.set()


if __name__ == "__main__":
    main()
