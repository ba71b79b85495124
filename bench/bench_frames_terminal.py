"""Frames drawn per second in a real terminal, per renderer, at 10 fps asked; and what drawing them costs the run.

    python bench/bench_frames_terminal.py [--seconds 8] [--renderers sixel,halfblock]

Needs Xvfb, xterm (-ti vt340: sixel), xwd and ImageMagick (.ci/run installs them). The app runs the LunarLander
demo's do-nothing path (tests/support/frame_paths.py) with its frame panel open in xterm on a virtual display.
"Drawn": the display is captured about 20 times a second and the frame pane's pixels compared with the capture
before; a change is a frame drawn (the pane's label is outside the region compared). "Cost": the run's episodes
per second with the panel drawing, over the same run headless with frames off (the app's own cost at 10 fps).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.common import episodes_in  # noqa: E402

NOOP = f"noop={ROOT / 'tests/support/frame_paths.py'}:do_nothing_at_full_speed"
RUN = ["demo", "lunarlander", "--path", NOOP, "--paths", "noop", "--seeds", "1000:100000"]


def start_display() -> tuple[subprocess.Popen, str]:
    number = next(n for n in range(40 + os.getpid() % 200, 1000) if not Path(f"/tmp/.X{n}-lock").exists())
    server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    display = f":{number}"
    env = {**os.environ, "DISPLAY": display}
    while subprocess.run(["xterm", "-e", "true"], env=env, capture_output=True).returncode:
        time.sleep(0.3)
    return server, display


def capture(display: str) -> np.ndarray:
    """The screen as (H, W, 3) uint8, read from xwd's dump directly (ImageMagick would cap the sampling rate)."""
    raw = subprocess.run(["xwd", "-root", "-silent", "-display", display], capture_output=True, check=True).stdout
    field = [int.from_bytes(raw[i:i + 4], "big") for i in range(0, 100, 4)]
    header, width, height, per_line, colours = field[0], field[4], field[5], field[12], field[19]
    pixels = np.frombuffer(raw, dtype=np.uint8, offset=header + 12 * colours, count=per_line * height)
    return pixels.reshape(height, per_line // 4, 4)[:, :width, 2::-1]  # BGRX, little-endian


def episodes_per_s(log: Path, seconds: float) -> float:
    start, began = episodes_in(log), time.monotonic()
    time.sleep(seconds)
    return (episodes_in(log) - start) / (time.monotonic() - began)


def in_xterm(renderer: str, display: str, folder: Path, seconds: float) -> tuple[float, float]:
    """(frames drawn per second, episodes per second) with the panel open in xterm."""
    log = folder / f"{renderer}.sqlite"
    app = [sys.executable, "-m", "tui_eval.cli", *RUN, "--frames", "--frames-renderer", renderer, "--log", str(log)]
    env = {**os.environ, "DISPLAY": display, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}
    env.pop("TMUX", None)
    term = subprocess.Popen(["xterm", "-ti", "vt340", "-geometry", "100x30+0+0", "-fa", "Monospace", "-fs", "10",
                             "-e", *app], env=env, cwd=folder)
    try:
        while episodes_in(log) < 3:
            time.sleep(0.2)
        time.sleep(2)
        changes, samples, began, before = 0, 0, time.monotonic(), None
        start = episodes_in(log)
        while time.monotonic() - began < seconds:
            pane = capture(display)[60:560, 10:990]
            samples += 1
            if before is not None and not np.array_equal(pane, before):
                changes += 1
            before = pane
        elapsed = time.monotonic() - began
        print(f"  ({renderer}: {samples / elapsed:.0f} captures/s)")
        return changes / elapsed, (episodes_in(log) - start) / elapsed
    finally:
        term.terminate()  # the run goes on without its terminal, as over a dropped SSH: stop it
        term.wait(10)
        subprocess.run([sys.executable, "-m", "tui_eval.cli", "stop", str(log)], capture_output=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})


def headless(folder: Path, seconds: float) -> float:
    log = folder / "headless.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "tui_eval.cli", *RUN, "--headless", "--log", str(log)],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        while episodes_in(log) < 3:
            time.sleep(0.2)
        time.sleep(2)
        return episodes_per_s(log, seconds)
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--renderers", default="sixel,halfblock")
    args = parser.parse_args()
    server, display = start_display()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            bare = headless(folder, args.seconds)
            print(f"headless, frames off: {bare:.1f} episodes/s")
            for renderer in args.renderers.split(","):
                fps, eps = in_xterm(renderer, display, folder, args.seconds)
                print(f"{renderer:>9} in xterm at 10 fps asked: {fps:.1f} frames drawn/s; {eps:.1f} episodes/s "
                      f"= {eps / bare:.2f}x headless with frames off")
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
