"""Frames in real terminal emulators under a virtual X display (Debian's xvfb, xterm, kitty; .ci/run installs
them): the renderer is chosen from what the terminal answers, and what the screen shows is the env's own frame.

The frame panel runs on LunarLander with a policy anyone can replay without it (tests/support/frame_paths.py:
do nothing), on fixed seeds; once the run ends the pane holds the last seed's last frame. A screenshot of the
display (xwd, ImageMagick) is compared with LunarLander's own rgb_array frame for that seed and step, scaled."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.support.common import ROOT, episodes_in, wait_until

CONVERT = Path("/usr/bin/convert")  # ImageMagick's (a stand-in elsewhere on PATH may not read XWD)
needs_x = pytest.mark.skipif(not all(shutil.which(t) for t in ("Xvfb", "xterm", "xwd")) or not CONVERT.exists(),
                             reason="Xvfb, xterm, xwd or ImageMagick missing (.ci/run installs them)")
SEEDS, LAST_SEED = "7:12", 11
NOOP = f"noop={ROOT / 'tests/support/frame_paths.py'}:do_nothing"
PROBE = ("import json, os, sys; from tui_eval.ui.frame_renderers import choose; o = choose(None, True, None); "
         "open(sys.argv[1], 'w').write(json.dumps({'renderer': o.renderer, 'why': o.why}))")


@pytest.fixture(scope="module")
def display(tmp_path_factory):
    """A virtual X display of its own."""
    number = next(n for n in range(40 + os.getpid() % 200, 1000) if not Path(f"/tmp/.X{n}-lock").exists())
    said = tmp_path_factory.mktemp("xvfb") / "xvfb.log"
    with open(said, "wb") as sink:
        server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                  stdout=sink, stderr=subprocess.STDOUT)
    ready = {**os.environ, "DISPLAY": f":{number}"}
    tries: list[str] = []

    def xterm_starts() -> bool:  # a just-started Xvfb may refuse xterm a moment longer
        run = subprocess.run(["xterm", "-e", "true"], env=ready, capture_output=True, text=True)
        tries.append(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}")
        return run.returncode == 0

    try:
        wait_until(xterm_starts, timeout=120, interval=0.5)
    except AssertionError:
        server.terminate()
        state = "running" if server.poll() is None else "gone"
        raise AssertionError(f"xterm cannot open :{number} (Xvfb {state}; {len(tries)} tries, last: {tries[-1:]}; "
                             f"Xvfb said: {said.read_text()[-300:]!r})") from None
    yield f":{number}"
    server.terminate()
    server.wait(10)


def _env(display: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k not in ("TMUX", "STY", "COLORTERM")}
    return {**keep, "DISPLAY": display, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}


def _terminal(kind: str, command: list[str], display: str, log: Path) -> subprocess.Popen:
    line = shlex.join(command) + "; sleep 60"
    argv = (["xterm", "-ti", "vt340", "-geometry", "100x30+0+0", "-fa", "Monospace", "-fs", "10", "-e"]
            if kind == "xterm" else ["kitty", "-o", "linux_display_server=x11", "--"]) + ["bash", "-c", line]
    with open(log, "wb") as sink:
        return subprocess.Popen(argv, env=_env(display), stdout=sink, stderr=subprocess.STDOUT, cwd=log.parent)


def _probe(kind: str, display: str, tmp_path: Path) -> dict:
    out = tmp_path / f"{kind}-probe.json"
    term = _terminal(kind, [sys.executable, "-c", PROBE, str(out)], display, tmp_path / f"{kind}-probe.log")
    try:
        wait_until(out.exists, timeout=60)
        return json.loads(wait_until(out.read_text, timeout=10))
    finally:
        term.kill()


def _screenshot(display: str, tmp_path: Path) -> np.ndarray:
    from PIL import Image

    raw, png = tmp_path / "screen.xwd", tmp_path / "screen.png"
    with open(raw, "wb") as sink:
        subprocess.run(["xwd", "-root", "-silent", "-display", display], stdout=sink, check=True)
    subprocess.run([str(CONVERT), f"xwd:{raw}", str(png)], check=True)
    return np.asarray(Image.open(png).convert("RGB"))


def _do_nothing_last_frame(seed: int) -> tuple[np.ndarray, int]:
    import gymnasium as gym

    env = gym.make("LunarLander-v3", render_mode="rgb_array")
    env.reset(seed=seed)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(0)
        steps, done = steps + 1, terminated or truncated
    return env.render(), steps


def _run_frames(kind: str, display: str, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / f"{kind}.sqlite"
    app = [sys.executable, "-m", "tui_eval.cli", "demo", "lunarlander", "--path", NOOP, "--paths", "noop", "--seeds",
           SEEDS, "--episodes", "5", "--frames", "--log", str(log)]
    term = _terminal(kind, app, display, tmp_path / f"{kind}-terminal.log")
    wait_until(lambda: episodes_in(log) >= 5, timeout=180)
    time.sleep(3)  # the panel's last draw of the last frame
    return term, log


def _picture_box(screen: np.ndarray, aspect: float, reference: np.ndarray) -> tuple[np.ndarray, float]:
    """The pane's picture: LunarLander's ground is white to both edges at the bottom, which gives the picture's
    width and bottom; its height is searched around the frame's aspect. (The box, its mean difference.)"""
    from PIL import Image

    white = (screen == 255).all(axis=2)
    wide = white.sum(axis=1) > white.shape[1] // 5
    ground = wide & np.all([np.roll(wide, k) for k in range(1, 6)], axis=0)  # not the window's 1-pixel border
    bottom = int(np.where(ground)[0].max()) + 1
    left, right = _longest_run(white[bottom - 1])  # the ground's last row (not the window's border)
    width = right - left
    small = (120, 80)
    target = np.asarray(Image.fromarray(reference).resize(small, Image.Resampling.BOX)).astype(float)
    best: tuple[float, np.ndarray] | None = None
    for height in range(round(width / aspect) - 30, round(width / aspect) + 31):
        box = screen[bottom - height:bottom, left:right]
        diff = np.abs(np.asarray(Image.fromarray(box).resize(small, Image.Resampling.BOX)).astype(float) - target)
        if best is None or diff.mean() < best[0]:
            best = (float(diff.mean()), box)
    assert best is not None
    return best[1], best[0]


def _longest_run(row: np.ndarray) -> tuple[int, int]:
    edges = np.diff(np.concatenate([[0], row.astype(np.int8), [0]]))
    starts, ends = np.where(edges == 1)[0], np.where(edges == -1)[0]
    longest = int(np.argmax(ends - starts))
    return int(starts[longest]), int(ends[longest])


@needs_x
def test_xterm_with_sixel_draws_the_envs_own_frame_of_the_seed_and_step_shown(display, tmp_path):
    probe = _probe("xterm", display, tmp_path)
    assert probe["renderer"] == "sixel" and "XTerm" in probe["why"] and "colour registers" in probe["why"]
    reference, steps = _do_nothing_last_frame(LAST_SEED)
    term, _ = _run_frames("xterm", display, tmp_path)
    aspect = reference.shape[1] / reference.shape[0]
    try:  # on a busy machine the panel may still be drawing the last frame: look again for a while
        deadline, difference = time.monotonic() + 60, float("inf")
        while difference >= 10 and time.monotonic() < deadline:
            try:
                box, difference = _picture_box(_screenshot(display, tmp_path), aspect, reference)
            except ValueError:  # no picture on the screen yet
                difference = float("inf")
            if difference >= 10:
                time.sleep(1)
    finally:
        term.kill()
    assert difference < 10, f"the pane differs from seed {LAST_SEED}'s step {steps} frame by {difference:.1f}/255"
    grey = (box.max(axis=2) - box.min(axis=2) < 8) & (box.mean(axis=2) > 40) & (box.mean(axis=2) < 245)
    assert grey.mean() < 0.03  # no flat grey blocks over the picture (the sky is black, the ground white)
    lander = ((box[:, :, 2] > 150) & (box[:, :, 0] < 180) & (box[:, :, 1] < 150)).mean()
    assert lander > 0.001  # the lander (violet) is drawn where the env drew it


@needs_x
@pytest.mark.skipif(shutil.which("kitty") is None, reason="kitty is not installed")
def test_kitty_without_unicode_placeholders_gets_half_blocks_and_no_malformed_commands(display, tmp_path):
    version = subprocess.run(["kitty", "--version"], capture_output=True, text=True).stdout
    try:
        probe = _probe("kitty", display, tmp_path)
    except AssertionError:
        pytest.skip(f"kitty did not start on the virtual display ({version.strip()})")
    major_minor = tuple(int(p) for p in version.split()[1].split(".")[:2])
    if major_minor >= (0, 28):
        assert probe["renderer"] == "kitty"
        return
    assert probe["renderer"] == "halfblock" and "Unicode placeholders" in probe["why"]
    term, _ = _run_frames("kitty", display, tmp_path)
    term.kill()
    said = (tmp_path / "kitty-terminal.log").read_text(errors="replace")
    assert "Malformed GraphicsCommand" not in said
