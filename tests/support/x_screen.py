"""Terminal emulators on a virtual X display, and what their screens show (tests/e2e/test_real_terminals.py).

Pictures are LunarLander frames: a black sky, white ground reaching both edges of the picture, a violet lander.
A screenshot (xwd, converted by ImageMagick) is searched for that picture and compared with the env's own
rgb_array frame, scaled to the box found. Keys go in with xdotool: there is no window manager, so the pointer is
moved over the window, which then has the keyboard."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.support.common import ROOT

CONVERT = Path("/usr/bin/convert")  # ImageMagick's (a stand-in elsewhere on PATH may not read XWD)
SMALL = (120, 80)  # pictures are compared at this size


def terminal_env(display: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k not in ("TMUX", "STY", "COLORTERM")}
    return {**keep, "DISPLAY": display, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}


def terminal(kind: str, command: list[str], display: str, log: Path, record: Path | None = None) -> subprocess.Popen:
    """`command` in a new xterm (sixel, as a VT340) or kitty window at the display's top left; with `record`, all
    it writes to the terminal is kept there too (script(1) between them)."""
    if record is not None:
        command = ["script", "-qfc", shlex.join(command), str(record)]
    line = shlex.join(command) + "; sleep 60"
    argv = (["xterm", "-ti", "vt340", "-geometry", "100x30+0+0", "-fa", "Monospace", "-fs", "10", "-bg", "black", "-e"]
            if kind == "xterm" else ["kitty", "-o", "linux_display_server=x11", "--"]) + ["bash", "-c", line]
    with open(log, "wb") as sink:
        return subprocess.Popen(argv, env=terminal_env(display), stdout=sink, stderr=subprocess.STDOUT,
                                cwd=log.parent)


def close_terminal(term: subprocess.Popen, marker: Path) -> None:
    """Close the terminal and end what ran in it: every process whose command line names `marker` (the run's
    log). Under script(1) (recording) the app would outlive the terminal."""
    term.kill()
    term.wait(10)
    for signal in ("TERM", "KILL"):
        subprocess.run(["pkill", f"-{signal}", "-f", str(marker)], check=False)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if subprocess.run(["pgrep", "-f", str(marker)], capture_output=True).returncode:
                return
            time.sleep(0.2)


def screenshot(display: str, tmp_path: Path) -> np.ndarray:
    from PIL import Image

    raw, png = tmp_path / "screen.xwd", tmp_path / "screen.png"
    with open(raw, "wb") as sink:
        subprocess.run(["xwd", "-root", "-silent", "-display", display], stdout=sink, check=True)
    subprocess.run([str(CONVERT), f"xwd:{raw}", str(png)], check=True)
    return np.asarray(Image.open(png).convert("RGB"))


def sixel_images_in(record: Path) -> int:
    """Sixel images written to the terminal so far (DCS ... q introducers)."""
    return len(re.findall(rb"\x1bP[0-9;]*q", record.read_bytes()))


def type_keys(display: str, *keys: str) -> None:
    """X key names (question, Escape, bracketleft, v) typed into the window under the pointer."""
    env = {**os.environ, "DISPLAY": display}
    subprocess.run(["xdotool", "mousemove", "200", "200"], env=env, check=True)
    subprocess.run(["xdotool", "key", "--delay", "100", *keys], env=env, check=True)


def resize_terminal(display: str, width: int, height: int) -> None:
    env = {**os.environ, "DISPLAY": display}
    found = subprocess.run(["xdotool", "search", "--class", "xterm"], env=env, capture_output=True, text=True)
    for window in found.stdout.split():
        subprocess.run(["xdotool", "windowsize", window, str(width), str(height)], env=env, check=True)


def terminal_width(display: str) -> int:
    """The xterm window's width in pixels."""
    return terminal_size(display)[0]


def terminal_size(display: str) -> tuple[int, int]:
    """The xterm window's width and height in pixels."""
    env = {**os.environ, "DISPLAY": display}
    window = subprocess.run(["xdotool", "search", "--class", "xterm"], env=env, capture_output=True,
                            text=True).stdout.split()[0]
    geometry = subprocess.run(["xdotool", "getwindowgeometry", window], env=env, capture_output=True, text=True)
    size = next(line for line in geometry.stdout.splitlines() if "Geometry:" in line).split()[-1]
    width, height = size.split("x")
    return int(width), int(height)


def click_cell(display: str, column: int, row: int, columns: int = 100, rows: int = 30) -> None:
    """Click the xterm's cell at `column`, `row` (from 0) of its `columns` x `rows` (xterm's border: 2 pixels)."""
    width, height = terminal_size(display)
    x = 2 + round((column + 0.5) * (width - 4) / columns)
    y = 2 + round((row + 0.5) * (height - 4) / rows)
    env = {**os.environ, "DISPLAY": display}
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], env=env, check=True)


def do_nothing_last_frame(seed: int) -> tuple[np.ndarray, int]:
    """LunarLander's own rgb_array frame after doing nothing until the episode ends, and its step."""
    import gymnasium as gym

    env = gym.make("LunarLander-v3", render_mode="rgb_array")
    env.reset(seed=seed)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(0)
        steps, done = steps + 1, terminated or truncated
    return env.render(), steps


@dataclass
class Box:
    top: int
    bottom: int
    left: int
    right: int
    difference: float  # mean absolute difference from the reference, 0-255

    def cut(self, screen: np.ndarray) -> np.ndarray:
        return screen[self.top:self.bottom, self.left:self.right]


def ground_rows(screen: np.ndarray) -> np.ndarray:
    """Rows where white runs across at least a fifth of the width, six rows deep or more (LunarLander's ground;
    not a window's 1-pixel border or a line of text)."""
    white = (screen == 255).all(axis=2)
    wide = white.sum(axis=1) > white.shape[1] // 5
    return wide & np.all([np.roll(wide, k) for k in range(1, 6)], axis=0)


def lander_share(screen: np.ndarray) -> float:
    """The share of violet pixels: the lander's colour (128, 102, 230), and no colour of the app's."""
    red, green, blue = (screen[:, :, i].astype(int) for i in range(3))
    return float(((abs(red - 128) < 30) & (abs(green - 102) < 30) & (abs(blue - 230) < 20) & (red - green > 10)).mean())


def has_no_picture(screen: np.ndarray) -> bool:
    return not ground_rows(screen).any() and lander_share(screen) < 1e-4


def picture_box(screen: np.ndarray, reference: np.ndarray) -> Box | None:
    """The LunarLander picture on `screen` that looks most like `reference`: the ground gives its width and bottom,
    its height is searched around the reference's aspect. None when there is no ground on the screen."""
    return picture_boxes(screen, (reference,))[0]


def picture_boxes(screen: np.ndarray, references: tuple[np.ndarray, ...]) -> list[Box | None]:
    """picture_box for each of `references`, the screen's candidate boxes cut and scaled once for all of them."""
    ground = ground_rows(screen)
    if not ground.any():
        return [None] * len(references)
    bottom = int(np.where(ground)[0].max()) + 1
    left, right = _longest_run((screen[bottom - 1] == 255).all(axis=1))  # the ground's last row
    candidates: dict[float, list[tuple[int, np.ndarray]]] = {}
    found: list[Box | None] = []
    for reference in references:
        aspect = reference.shape[1] / reference.shape[0]
        if aspect not in candidates:
            candidates[aspect] = _candidate_boxes(screen, bottom, left, right, aspect)
        target = _small(reference)
        best: Box | None = None
        for top, small in candidates[aspect]:
            difference = float(np.abs(small - target).mean())
            if best is None or difference < best.difference:
                best = Box(top, bottom, left, right, difference)
        found.append(best)
    return found


def _candidate_boxes(screen: np.ndarray, bottom: int, left: int, right: int,
                     aspect: float) -> list[tuple[int, np.ndarray]]:
    """(top, the box scaled to SMALL) for each height within 30 rows of `aspect`'s, the ground at `bottom`. The
    boxes share their columns: those are scaled once, each box's rows alone then."""
    from PIL import Image

    guess = round((right - left) / aspect)
    highest = max(0, bottom - guess - 30)
    columns = Image.fromarray(screen[highest:bottom, left:right]).resize((SMALL[0], bottom - highest),
                                                                         Image.Resampling.BOX)
    boxes = []
    for height in range(max(8, guess - 30), guess + 31):
        top = max(0, bottom - height)
        rows = columns.crop((0, top - highest, SMALL[0], bottom - highest))
        boxes.append((top, np.asarray(rows.resize(SMALL, Image.Resampling.BOX)).astype(float)))
    return boxes


def _small(picture: np.ndarray) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.fromarray(picture).resize(SMALL, Image.Resampling.BOX)).astype(float)


def _longest_run(row: np.ndarray) -> tuple[int, int]:
    edges = np.diff(np.concatenate([[0], row.astype(np.int8), [0]]))
    starts, ends = np.where(edges == 1)[0], np.where(edges == -1)[0]
    longest = int(np.argmax(ends - starts))
    return int(starts[longest]), int(ends[longest])


def look(display: str, tmp_path: Path, check: Callable[[np.ndarray], str | None], timeout: float = 45) -> None:
    """Take screenshots until `check` (None: as expected, else what is wrong) passes; a busy machine may still be
    drawing. Fails with the last thing wrong, the screenshot kept as tmp_path/failed.png."""
    deadline, wrong = time.monotonic() + timeout, "no screenshot taken"
    while time.monotonic() < deadline:
        screen = screenshot(display, tmp_path)
        wrong = check(screen)
        if wrong is None:
            return
        time.sleep(0.3)  # a screenshot and its comparison take about as long: the terminal keeps most of the CPU
    from PIL import Image

    Image.fromarray(screen).save(tmp_path / "failed.png")
    raise AssertionError(f"{wrong} (screenshot: {tmp_path / 'failed.png'})")


def shows(reference: np.ndarray, what: str, tolerance: float = 10, lander: bool = True,
          not_like: tuple[np.ndarray, ...] = ()) -> Callable[[np.ndarray], str | None]:
    """A check: the screen shows `reference` (within `tolerance`/255) and looks more like it than like any of
    `not_like` (the other seeds' frames), with no flat grey blocks over it and (with `lander`: in its own colour,
    not one of 256) the lander drawn where the env drew it."""

    def check(screen: np.ndarray) -> str | None:
        box, *others = picture_boxes(screen, (reference, *not_like))
        if box is None:
            return f"no picture where {what} should be"
        if box.difference >= tolerance:
            return f"the picture differs from {what} by {box.difference:.1f}/255"
        for closer in others:
            if closer is not None and closer.difference <= box.difference + 2:
                return f"the picture looks as much like another frame ({closer.difference:.1f}) as {what}"
        picture = box.cut(screen)
        grey = (picture.max(axis=2) - picture.min(axis=2) < 8) & (picture.mean(axis=2) > 40) & \
            (picture.mean(axis=2) < 245)
        if grey.mean() >= 0.03:
            return f"{grey.mean():.0%} of the picture of {what} is flat grey"
        if lander and lander_share(picture) <= 0.001:
            return f"no lander in the picture of {what}"
        return None

    return check


def nothing_shown(what: str) -> Callable[[np.ndarray], str | None]:
    def check(screen: np.ndarray) -> str | None:
        return None if has_no_picture(screen) else f"a picture is on the screen {what}"

    return check
