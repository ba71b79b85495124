"""Env steps/s with frames shown at 10 fps vs frames off, on the LunarLander pixel demo, ratios in one run.

    python bench/bench_frames_hub.py [--paths evaluate,connectors] [--num-envs 4] [--episodes 8] [--rounds 3]

"Frames shown": the path's shown env renders (rgb_array, at most --fps frames a second) into the run's
frame hub, and a viewer thread in the same process takes the newest frames at --fps and draws them as
half-block cells for a 58x36-cell pane per path, as the app does at 120x40 (it shares the GIL with the
evaluation). "Off": the same path, no tap. Target: >= 0.9 for each path.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import ListFeed, interleaved  # noqa: E402


class FramedFeed(ListFeed):
    def __init__(self, seeds, tap):
        super().__init__(seeds)
        self.frames = tap


def viewer(hub, paths: list[str], fps: float, stop: threading.Event) -> None:
    from tui_eval.frames.cells import halfblock_lines

    while not stop.wait(1.0 / fps):
        for pane in hub.view(paths).panes:
            if pane.frames:
                halfblock_lines(pane.frames[-1].image, 58, 36)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="evaluate,connectors")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fps", type=float, default=10.0)
    args = parser.parse_args()

    from tui_eval.local_ray import prepare_environment

    prepare_environment()
    from tui_eval.cli import build_parser, spec_from_args
    from tui_eval.frames.hub import FrameHub
    from tui_eval.quiet import quiet_libraries
    from tui_eval.session import plan_run, share_cpu_threads

    quiet_libraries()
    checkpoint = ROOT / "assets" / "ppo_lunarlander"
    spec = spec_from_args(build_parser().parse_args(
        [str(checkpoint), "--paths", args.paths, "--num-envs", str(args.num_envs), "--log", "/dev/null"]))
    plan = plan_run(spec)
    share_cpu_threads(2)  # one torch thread, as in a run of two paths on 2 cores (spinning threads add noise)
    seeds = iter(range(10**6))
    results = {}
    for name in plan.paths:
        path = plan.kind.build_path(name, plan.explore[name])
        hub = FrameHub(fps=args.fps)
        hub.always = True

        def run(framed: bool, path=path, hub=hub, name=name) -> int:
            batch = [next(seeds) for _ in range(args.episodes)]
            steps = []
            stop = threading.Event()
            if framed:
                threading.Thread(target=viewer, args=(hub, [name], args.fps, stop), daemon=True).start()
            feed = FramedFeed(batch, hub.tap(name)) if framed else ListFeed(batch)
            try:
                path.run(feed, lambda rec: steps.append(rec.length))
            finally:
                stop.set()
            return sum(steps)

        run(False)  # warm-up: first calls compile and fill caches
        rates = interleaved({"off": lambda: run(False), "frames": lambda: run(True)}, rounds=args.rounds)
        shown = sum(len(ep.frames) for ep in hub.tap(name).episodes)
        results[name] = rates
        print(f"{name:>11}: off {rates['off']:8.0f} steps/s, frames at {args.fps:g} fps {rates['frames']:8.0f} "
              f"steps/s, ratio {rates['frames'] / rates['off']:.2f} (target >= 0.9; {shown} frames kept)", flush=True)
        path.close()


if __name__ == "__main__":
    main()
