"""Frames drawn per second in a real terminal, per renderer, at 10 fps asked; and what drawing them costs the run.

    python bench/bench_frames.py [--seconds 8] [--renderers sixel,halfblock]

Needs Xvfb, xterm (-ti vt340: sixel), xwd and ImageMagick (.ci/run installs them). The app runs the LunarLander
demo's do-nothing path at full speed (tests/support/frame_paths.py) with its frame panel open in xterm on a virtual
display. "Drawn": the display is captured as fast as xwd allows and a frame counts once the pane's pixels have
changed and then held still for a capture (a picture the terminal is still painting is not a frame); "sent": sixel
images the app wrote to the terminal (script(1) between them). "Cost": the run's episodes per second with the panel
drawing, over the same run headless with frames off (the app's own cost at 10 fps).
(bench/bench_frames_hub.py: the frame hub's cost to the env steps, in one process, without a terminal.)
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
from tests.support.x_screen import close_terminal, sixel_images_in, terminal  # noqa: E402

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


def in_xterm(renderer: str | None, display: str, folder: Path, seconds: float) -> tuple[float, int, float]:
    """(frames drawn per second, sixel images sent per second, episodes per second) with the app in xterm and the
    frame panel open with `renderer` (None: the run screen, no frames). Frames are counted first; the episodes are
    counted after, with the display left alone (capturing it costs the machine too)."""
    name = renderer or "off"
    log, record = folder / f"{name}.sqlite", folder / f"{name}.typescript"
    shown = ["--frames", "--frames-renderer", renderer] if renderer else []
    app = [sys.executable, "-m", "tui_eval.cli", *RUN, *shown, "--log", str(log)]
    term = terminal("xterm", app, display, folder / f"{name}-terminal.log", record)
    try:
        while episodes_in(log) < 3:
            time.sleep(0.2)
        time.sleep(2)
        fps, sent = (drawn_per_s(display, record, seconds) if renderer else (0.0, 0))
        return fps, sent, episodes_per_s(log, seconds)
    finally:
        close_terminal(term, log)


def drawn_per_s(display: str, record: Path, seconds: float) -> tuple[float, int]:
    """Frames that reached the screen whole, per second; sixel images sent per second."""
    drawn, began, before, changing = 0, time.monotonic(), None, False
    sent = sixel_images_in(record)
    while time.monotonic() - began < seconds:
        pane = capture(display)[60:560, 10:990]
        if before is not None and not np.array_equal(pane, before):
            changing = True
        elif changing:
            drawn, changing = drawn + 1, False  # changed, then held still: a whole frame on the screen
        before = pane
    elapsed = time.monotonic() - began
    return drawn / elapsed, round((sixel_images_in(record) - sent) / elapsed)


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
            _, _, off = in_xterm(None, display, folder, args.seconds)
            print(f"the app in xterm, frames off: {off:.1f} episodes/s = {off / bare:.2f}x headless")
            for renderer in args.renderers.split(","):
                fps, sent, eps = in_xterm(renderer, display, folder, args.seconds)
                images = f", {sent} sixel images sent/s" if renderer == "sixel" else ""
                cost = (1 - eps / off) / max(fps, 1e-9) * 1000
                print(f"{renderer:>9} in xterm at 10 fps asked: {fps:.1f} frames drawn/s{images}; {eps:.1f} "
                      f"episodes/s = {eps / off:.2f}x the app with frames off ({cost:.0f} ms of the run's time "
                      f"a frame)")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
