"""What the live app costs the evaluation, and how fast it answers.

1. Env steps/s of the same run (`--paths connectors`, fixed episodes) with the app live (Textual's
   headless driver via `App.run_test`, which still lays out and renders every frame) and without any
   UI (the engine alone, as `--headless` runs it). Runs alternate to share the machine's noise;
   target: ratio ≥ 0.95.
2. Memory the app holds while a million episodes stream through it (ring buffers: it must stay flat).
3. Latency from a `p` key press to the paused state being written to the terminal while episodes
   stream: measured at the driver (the bytes Textual writes), and in a real terminal (tmux
   `send-keys` then `capture-pane` polling) when tmux is present. Target ≤ 100 ms.

Run: python bench/bench_ui.py [--episodes 150] [--repeats 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_DEDUP_LOGS", "0")

from tui_eval.cli import build_parser, spec_from_args  # noqa: E402
from tui_eval.session import plan_run, start_engine  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = ROOT / "assets" / "ppo_cartpole"


def make_plan(tmp: Path, name: str, episodes: int | None, num_envs: int):
    argv = [str(CHECKPOINT), "--paths", "connectors", "--num-envs", str(num_envs), "--log", str(tmp / f"{name}.sqlite")]
    if episodes:
        argv += ["--episodes", str(episodes)]
    return plan_run(spec_from_args(build_parser().parse_args(argv)))


def run_headless(tmp: Path, name: str, episodes: int, num_envs: int) -> float:
    engine = start_engine(make_plan(tmp, name, episodes, num_envs))
    engine.start()
    engine.wait()
    engine.close()
    return engine.throughput("connectors")[1]


async def _run_app(tmp: Path, name: str, episodes: int, num_envs: int) -> float:
    from tui_eval.ui.app import EvalApp

    app = EvalApp(make_plan(tmp, name, episodes, num_envs))
    async with app.run_test(size=(120, 40)) as pilot:
        while app.engine is None or app.engine.state != "done":
            await asyncio.sleep(0.25)  # not pilot.pause: its screen walk would cost the app ~2% CPU
        steps = app.engine.throughput("connectors")[1]
        await pilot.press("q")
    app.engine.close()
    return steps


def run_app(tmp: Path, name: str, episodes: int, num_envs: int) -> float:
    return asyncio.run(_run_app(tmp, name, episodes, num_envs))


async def _pause_latency(tmp: Path, presses: int, num_envs: int) -> list[float]:
    """ms from the key press to the header's render that shows the new state (the frame that holds it).

    Textual's headless driver composes every frame but writes nothing, so the moment measured is the
    header's render into the next frame; the tmux measurement below adds the terminal."""
    from tui_eval.ui.app import EvalApp
    from tui_eval.ui.widgets import RunHeader

    app = EvalApp(make_plan(tmp, "latency", None, num_envs))
    seen: dict[str, float] = {}
    times = []
    original = RunHeader.render

    def render(self):
        text = original(self)
        for word in ("PAUSED", "RUNNING"):
            if word in text.plain and word not in seen:
                seen[word] = time.perf_counter()
        return text

    RunHeader.render = render
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            while app.engine is None or app.engine.stats.paths["connectors"].episodes < 10:
                await pilot.pause(0.05)
            for i in range(presses):
                want = "PAUSED" if i % 2 == 0 else "RUNNING"
                seen.clear()
                t0 = time.perf_counter()
                await pilot.press("p")
                while want not in seen and time.perf_counter() - t0 < 2.0:
                    await asyncio.sleep(0.001)
                times.append(1000 * (seen.get(want, float("inf")) - t0))
                await pilot.pause(0.3)
            await pilot.press("q")
    finally:
        RunHeader.render = original
    app.engine.stop()
    app.engine.wait(10)
    app.engine.close()
    return times


def tmux_pause_latency(tmp: Path, presses: int) -> list[float] | None:
    """The same in a real terminal: tmux send-keys, then capture-pane until PAUSED/RUNNING shows."""
    if shutil.which("tmux") is None:
        return None
    session = f"bench-ui-{os.getpid()}"
    exe = Path(sys.executable).with_name("tui-eval")
    cmd = f"cd {tmp} && {exe} demo --paths connectors --num-envs 4 --log {tmp / 'tmux.sqlite'}"
    subprocess.run(["tmux", "new-session", "-d", "-x", "120", "-y", "40", "-s", session, cmd], check=True)

    def screen() -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout

    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = screen()
            if "RUNNING" in text and "connectors 1" in text.replace(",", ""):
                break
            time.sleep(0.2)
        else:
            return None
        times = []
        for i in range(presses):
            want = "PAUSED" if i % 2 == 0 else "RUNNING"
            t0 = time.perf_counter()
            subprocess.run(["tmux", "send-keys", "-t", session, "p"], check=True)
            while want not in screen().splitlines()[1] and time.perf_counter() - t0 < 2.0:
                pass
            times.append(1000 * (time.perf_counter() - t0))
            time.sleep(0.3)
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        time.sleep(2)
        return times
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


async def _memory(tmp: Path, total: int) -> tuple[list[int], list[int], dict[str, int]]:
    """Push `total` episodes through the app (inbox → log view → sparklines) and return the memory the
    app holds (tracemalloc, after the inbox is drained) after 20%, 50% and all of them."""
    import gc
    import tracemalloc

    from tui_eval.log.store import RunLog
    from tui_eval.records import EpisodeFinished, EpisodeRecord
    from tui_eval.ui.app import EvalApp
    from tui_eval.ui.widgets import EpisodeLog, Sparklines

    log_path = tmp / "memory.sqlite"
    log = RunLog(log_path)
    log.set_meta(paths=["a", "b"], explore={"a": False, "b": False}, seeds=[0, None], spec={}, status="running")
    log.close()
    app = EvalApp(log_path=log_path)

    def push(start: int, stop: int) -> None:
        put = app.inbox.put
        for i in range(start, stop):
            put(EpisodeFinished(EpisodeRecord(path="ab"[i % 2], seed=i // 2, ret=float(i % 500), length=i % 500,
                                              invalid=i % 997 == 0, reason="nan" if i % 997 == 0 else None)))

    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        tracemalloc.start()
        sizes = []
        marks = [total // 5, total // 2, total]
        for start, stop in zip([0] + marks[:-1], marks):
            await asyncio.get_running_loop().run_in_executor(None, push, start, stop)
            await pilot.pause(1.0)  # a few refreshes drain the inbox
            gc.collect()
            sizes.append(tracemalloc.get_traced_memory()[0])
        tracemalloc.stop()
        held = {"log rows": len(app.query_one(EpisodeLog).rows),
                "sparkline points": sum(len(p) for p in app.query_one(Sparklines).points.values()),
                "episodes seen": app.query_one(EpisodeLog).total}
        await pilot.press("q")
    return marks, sizes, held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--presses", type=int, default=6)
    parser.add_argument("--memory", type=int, default=1_000_000, help="episodes for the memory check (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        headless, live = [], []
        run_headless(tmp, "warmup", 20, args.num_envs)  # imports, caches
        run_app(tmp, "warmup-app", 20, args.num_envs)  # the same for the app (Textual, CSS)
        for i in range(args.repeats):
            headless.append(run_headless(tmp, f"headless{i}", args.episodes, args.num_envs))
            live.append(run_app(tmp, f"app{i}", args.episodes, args.num_envs))
            print(f"  run {i}: headless {headless[-1]:,.0f} steps/s, app live {live[-1]:,.0f} steps/s", flush=True)
        ratio = statistics.median(live) / statistics.median(headless)
        print(f"env steps/s, app live vs headless ({args.episodes} episodes, connectors, {args.num_envs} envs): "
              f"{statistics.median(live):,.0f} / {statistics.median(headless):,.0f} = {ratio:.3f} (target ≥ 0.95)")
        lat = asyncio.run(_pause_latency(tmp, args.presses, args.num_envs))
        print(f"key 'p' → state rendered into the next frame (ms, Pilot): median {statistics.median(lat):.1f}, "
              f"max {max(lat):.1f} (target ≤ 100)  [{', '.join(f'{t:.0f}' for t in lat)}]")
        if args.memory:
            marks, sizes, held = asyncio.run(_memory(tmp, args.memory))
            print("app memory (tracemalloc) after " + ", ".join(f"{m:,} episodes: {b / 1e6:.2f} MB"
                                                                for m, b in zip(marks, sizes)) + f"; held: {held}")
        real = tmux_pause_latency(tmp, args.presses)
        if real is None:
            print("real terminal: tmux not found, skipped")
        else:
            print(f"key 'p' → state on a tmux screen (ms, includes ~5 ms per capture-pane): median "
                  f"{statistics.median(real):.1f}, max {max(real):.1f}  [{', '.join(f'{t:.0f}' for t in real)}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
