"""Frames in real terminal emulators under a virtual X display (Debian's xvfb, xterm, kitty, xdotool; .ci/run
installs them): the renderer is chosen from what the terminal answers, and what the screen shows is the env's own
frame of the seed and step named above it, and nothing else.

The frame panel runs on LunarLander with policies anyone can replay without them (tests/support/frame_paths.py:
do nothing), on fixed seeds; once the run ends each pane holds the last seed's last frame. Screenshots of the
display are compared with LunarLander's own rgb_array frames (tests/support/x_screen.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.support.common import ROOT, episodes_in, wait_until
from tests.support.frame_paths import LATE_GATE
from tests.support.terminals import needs, unavailable
from tests.support.x_screen import (
    CONVERT,
    click_cell,
    close_terminal,
    do_nothing_last_frame,
    has_no_picture,
    look,
    nothing_shown,
    picture_box,
    resize_terminal,
    shows,
    sixel_images_in,
    terminal,
    terminal_width,
    type_keys,
)

needs_x = needs("Xvfb", "xterm", "xwd", "xdotool", str(CONVERT))
# the last seed is shown, the one before after `[`; the first may end before the frame panel asks for frames
SEEDS, LAST_SEED = "9:12", 11
LAST_TWO = "10:12"  # where the last seed alone is looked at
FRAME_PATHS = ROOT / "tests/support/frame_paths.py"
NOOP = f"noop={FRAME_PATHS}:do_nothing"
PROBE = ("import json, os, sys; from tui_eval.ui.frame_renderers import choose; o = choose(None, True, None); "
         "open(sys.argv[1], 'w').write(json.dumps({'renderer': o.renderer, 'why': o.why}))")


@pytest.fixture(scope="module")
def display(tmp_path_factory):
    """A virtual X display of its own."""
    number = next(n for n in range(40 + os.getpid() % 200, 1000) if not Path(f"/tmp/.X{n}-lock").exists())
    said = tmp_path_factory.mktemp("xvfb") / "xvfb.log"
    with open(said, "wb") as sink:
        # -noreset: by default the server resets when its last client leaves (the probe's xterm), and an xterm
        # opening the display during that reset fails with "Can't open display" (seen: 1 run in 3)
        server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"],
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


@pytest.fixture(scope="module")
def frames() -> dict[int, tuple[np.ndarray, int]]:
    """Each seed of the runs here and a few more (the screen must look unlike all of them but the one shown):
    LunarLander's own last frame doing nothing, and its step."""
    return {seed: do_nothing_last_frame(seed) for seed in range(7, 12)}


def _seed(frames: dict, seed: int, where: str = "", **options) -> Callable[[np.ndarray], str | None]:
    """The check that the screen shows `seed`'s last frame, and not another seed's."""
    frame, steps = frames[seed]
    others = tuple(f for s, (f, _) in frames.items() if s != seed)
    return shows(frame, f"seed {seed}'s step {steps} frame{where}", not_like=others, **options)


def _probe(kind: str, display: str, tmp_path: Path) -> dict:
    out = tmp_path / f"{kind}-probe.json"
    term = terminal(kind, [sys.executable, "-c", PROBE, str(out)], display, tmp_path / f"{kind}-probe.log")
    try:
        wait_until(out.exists, timeout=60)
        return json.loads(wait_until(out.read_text, timeout=10))
    finally:
        term.kill()


def _run_frames(kind: str, display: str, tmp_path: Path, *options: str, episodes: int = 3, seeds: str = SEEDS,
                record: Path | None = None) -> tuple[subprocess.Popen, Path]:
    """The LunarLander demo with the frame panel open, on `seeds` with the do-nothing path (or `options`'
    paths); returns once `episodes` are logged."""
    log = tmp_path / f"{kind}.sqlite"
    app = [sys.executable, "-m", "tui_eval.cli", "demo", "lunarlander", *(options or ("--path", NOOP, "--paths",
           "noop")), "--seeds", seeds, "--episodes", str(episodes), "--frames", "--log", str(log)]
    term = terminal(kind, app, display, tmp_path / f"{kind}-terminal.log", record)
    try:
        wait_until(lambda: episodes_in(log) >= episodes, timeout=180)
    except AssertionError:
        close_terminal(term, log)
        raise
    return term, log


@needs_x
def test_xterm_with_sixel_draws_the_envs_own_frame_of_the_seed_shown_and_nothing_else(display, tmp_path, frames):
    """The last seed's last frame; none while help is over the panel, the same again after; the older seed's after
    `[`, whole again once a notification over it is gone; the same at the new size after a resize, with nothing
    left of the larger picture; none once closed. A picture that does not change is sent once."""
    probe = _probe("xterm", display, tmp_path)
    assert probe["renderer"] == "sixel" and "XTerm" in probe["why"] and "colour registers" in probe["why"]
    record = tmp_path / "written.typescript"
    term, log = _run_frames("xterm", display, tmp_path, record=record)
    try:
        look(display, tmp_path, _seed(frames, LAST_SEED))
        sent = _settled(record)
        time.sleep(3)  # nothing changes: the picture is not sent again (a terminal erases a picture it redraws)
        assert sixel_images_in(record) == sent, f"{sixel_images_in(record) - sent} sixel images sent in 3 s idle"
        type_keys(display, "question")
        look(display, tmp_path, nothing_shown("while help is open over the panel"))
        type_keys(display, "Escape")
        look(display, tmp_path, _seed(frames, LAST_SEED, " after help closed"))
        type_keys(display, "bracketleft")
        look(display, tmp_path, _seed(frames, LAST_SEED - 1, " (after [)"))
        type_keys(display, "e")  # export: a notification over part of the picture for a few seconds
        look(display, tmp_path, lambda screen: "no notification yet" if _seed(frames, LAST_SEED - 1)(screen) is None
             else None, timeout=10)
        # a click on a notification (at the bottom right, over the picture) ends it, as a user does (else: 8 s)
        click_cell(display, 75, 25)
        look(display, tmp_path, _seed(frames, LAST_SEED - 1, " once the notification over it is gone"))
        width = terminal_width(display)
        resize_terminal(display, 700, 450)
        wait_until(lambda: terminal_width(display) < width, timeout=10)
        look(display, tmp_path, _alone(_seed(frames, LAST_SEED - 1, " after a resize"), frames[LAST_SEED - 1][0]))
        type_keys(display, "v")
        look(display, tmp_path, nothing_shown("once the frame panel is closed"))
    finally:
        close_terminal(term, log)


@needs_x
def test_xterm_with_half_blocks_draws_the_envs_own_frame_in_256_colours(display, tmp_path, frames):
    """The renderer asked for (--frames-renderer halfblock): two pixels a cell, colours from xterm's 256."""
    term, log = _run_frames("xterm", display, tmp_path, "--path", NOOP, "--paths", "noop", "--frames-renderer",
                          "halfblock", episodes=2, seeds=LAST_TWO)
    try:
        look(display, tmp_path, _seed(frames, LAST_SEED, " in half blocks", lander=False))
    finally:
        close_terminal(term, log)


def _settled(record: Path) -> int:
    """Sixel images sent once a second has passed without one (the run's last draws done)."""
    counts = [sixel_images_in(record)]

    def quiet() -> bool:
        time.sleep(1)
        counts.append(sixel_images_in(record))
        return counts[-1] == counts[-2]

    try:
        wait_until(quiet, timeout=30, interval=0)
    except AssertionError:
        raise AssertionError(f"sixel images keep coming while nothing changes: {counts[-1] - counts[0]} in "
                             f"{len(counts) - 1} s") from None
    return counts[-1]


def _alone(matches: Callable[[np.ndarray], str | None], reference: np.ndarray) -> Callable[[np.ndarray], str | None]:
    """`matches`, and no other picture (or part of one) anywhere else on the screen than `reference`'s."""

    def check(screen: np.ndarray) -> str | None:
        wrong = matches(screen)
        if wrong is not None:
            return wrong
        box = picture_box(screen, reference)
        assert box is not None
        rest = screen.copy()
        rest[box.top:box.bottom, box.left:box.right] = 0
        return None if has_no_picture(rest) else "another picture (or part of one) is on the screen too"

    return check


@needs_x
def test_a_pane_waiting_for_its_path_shows_no_picture_beside_the_other_paths_frame(display, tmp_path, frames,
                                                                                      monkeypatch):
    """Two paths; the second's env resets late with the first seed (tests/support/frame_paths.py), until this test
    has seen its pane: meanwhile the first pane shows the first path's frame of the newest seed and the second pane
    nothing; then both the same."""
    gate = tmp_path / "late-path-may-go"
    monkeypatch.setenv(LATE_GATE, str(gate))  # the terminal's app, and its path processes, inherit it
    late = f"late={FRAME_PATHS}:do_nothing_late"
    options = ("--import", str(FRAME_PATHS), "--env", "LunarLanderLateFirstSeed-v0", "--path", NOOP, "--path", late,
               "--paths", "noop,late")
    started = time.monotonic()
    term, log = _run_frames("xterm", display, tmp_path, *options, episodes=2, seeds="7:9")
    try:
        middle = terminal_width(display) // 2
        first = _seed(frames, 8, " in the first pane")

        def one_pane(screen: np.ndarray) -> str | None:
            if episodes_in(log) > 2:
                took = time.monotonic() - started
                raise AssertionError(f"the late path played before the panes were seen ({took:.0f} s in)")
            wrong = first(screen[:, :middle])
            return wrong or (None if has_no_picture(screen[:, middle:]) else "a picture in the waiting pane")

        look(display, tmp_path, one_pane)
        gate.touch()
        wait_until(lambda: episodes_in(log) >= 4, timeout=120)
        look(display, tmp_path, lambda screen: first(screen[:, :middle]) or
             _seed(frames, 8, " in the second pane")(screen[:, middle:]))
    finally:
        close_terminal(term, log)


@needs_x
@needs("kitty")
def test_kitty_without_unicode_placeholders_draws_the_frame_in_half_blocks_and_no_malformed_commands(display, tmp_path,
                                                                                                      frames):
    version = subprocess.run(["kitty", "--version"], capture_output=True, text=True).stdout
    try:
        probe = _probe("kitty", display, tmp_path)
    except AssertionError as exc:
        unavailable(f"kitty did not start on the virtual display ({version.strip()}): {exc}")
    major_minor = tuple(int(p) for p in version.split()[1].split(".")[:2])
    if major_minor >= (0, 28):
        assert probe["renderer"] == "kitty"
        return
    assert probe["renderer"] == "halfblock" and "Unicode placeholders" in probe["why"]
    term, log = _run_frames("kitty", display, tmp_path, episodes=2, seeds=LAST_TWO)
    try:  # kitty's window is small: the lander is a few blended cells, not its own colour
        look(display, tmp_path, _seed(frames, LAST_SEED, " in half blocks", lander=False))
    finally:
        close_terminal(term, log)
    said = (tmp_path / "kitty-terminal.log").read_text(errors="replace")
    assert "Malformed GraphicsCommand" not in said
