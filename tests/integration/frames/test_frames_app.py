"""The frame panel in the app (Pilot, real engine) and in a real terminal (tmux, truecolor half blocks)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.common import ASSETS, ROOT
from tests.support.terminals import needs
from tests.support.ui import frame_panes, wait_for
from tui_eval.cli import build_parser, spec_from_args
from tui_eval.session import plan_run
from tui_eval.ui.app import EvalApp
from tui_eval.ui.frame_renderers import FrameOptions
from tui_eval.ui.frames_screen import FramesScreen

LUNAR = ASSETS / "ppo_lunarlander"
POINTGOAL = ASSETS / "rsl_pointgoal" / "model_39.pt"
# the two paths of the LunarLander demo that need no Ray: its connectors path, and the same path as `vs`
NO_RAY = ("--vs", str(LUNAR), "--paths", "connectors,vs", "--num-envs", "2")


def _plan(tmp_path, checkpoint, *args):
    argv = [str(checkpoint), "--log", str(tmp_path / "run.sqlite"), *args]
    return plan_run(spec_from_args(build_parser().parse_args(argv)))


async def test_frames_panel_shows_both_paths_on_one_seed_and_pause_freezes_the_step(tmp_path, apps):
    app = EvalApp(_plan(tmp_path, LUNAR, *NO_RAY), frames=FrameOptions(show=True, fps=10))
    apps.append(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen, panes, labels = await frame_panes(pilot, app)
        assert labels[0].startswith("connectors  seed ") and labels[1].startswith("vs  seed ")
        seeds = {label.split("seed ")[1].split()[0] for label in labels}
        assert len(seeds) == 1  # side by side on the same seed
        assert all(p.image.image is not None and p.image.image.ndim == 3 for p in panes)

        await pilot.press("space")
        await pilot.pause(0.3)
        frozen = [p.label_text.plain for p in panes]
        await pilot.pause(1.5)  # episodes in flight go on after a pause; the frame holds still
        assert [p.label_text.plain for p in panes] == frozen
        assert app.source.state == "paused" and screen.frozen
        await pilot.press("left")
        await wait_for(pilot, lambda: "frame " in panes[0].label_text.plain, what="stepping back")
        panes[1].show(None, None)  # a path that has not played the seed shown: no picture (not an older one)
        assert panes[1].image.image is None and "waiting" in panes[1].message_text
        await pilot.press("escape")
        assert not isinstance(app.screen, FramesScreen)
        await pilot.press("q")


async def test_an_env_that_cannot_render_says_so_in_the_panel(tmp_path, apps):
    app = EvalApp(_plan(tmp_path, POINTGOAL, "--num-envs", "2"), frames=FrameOptions(show=True))
    apps.append(app)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await wait_for(pilot, lambda: isinstance(app.screen, FramesScreen) and app.screen,
                                what="the frame panel")
        pane = screen.panes["runner"]
        await wait_for(pilot, lambda: "cannot show frames" in pane.message_text, timeout=60, what="the message")
        assert "render_modes" in pane.message_text and pane.frame is None
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.source.stats.paths["runner"].episodes > 0, what="the run goes on")
        await pilot.press("q")


@needs("tmux")
def test_frames_in_tmux_are_truecolor_half_blocks(tmp_path):
    from tests.support.tmux import tmux, wait_screen

    name = f"tui-eval-frames-{os.getpid()}"
    command = (f"cd {tmp_path} && COLORTERM=truecolor TERM=xterm-256color {sys.executable} -m tui_eval.cli demo "
               f"lunarlander --frames {' '.join(NO_RAY)} --log {tmp_path / 'run.sqlite'}; echo EXIT=$?; sleep 30")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(["tmux", "new-session", "-d", "-x", "120", "-y", "40", "-s", name, command], check=True, env=env)
    try:
        text = wait_screen(name, lambda t: "connectors  seed" in t and "vs  seed" in t and "▀" in t, timeout=120)
        assert "frames · seed" in text
        coloured = tmux("capture-pane", "-p", "-e", "-t", name)
        assert "\x1b[38;2;" in coloured and "\x1b[48;2;" in coloured  # truecolor fore- and background
        cells = [line for line in coloured.splitlines() if "▀" in line]
        assert len(cells) >= 10
        tmux("send-keys", "-t", name, "v")
        tmux("send-keys", "-t", name, "q")
        wait_screen(name, lambda t: "EXIT=0" in t, timeout=60)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
