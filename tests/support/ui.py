"""Helpers for the app's tests: plans for the real engine, a polling wait for Pilot, synthetic run logs."""

from __future__ import annotations

import io
import time
from pathlib import Path

from tui_eval.cli import build_parser, spec_from_args
from tui_eval.log.store import RunLog
from tui_eval.records import EpisodeRecord
from tui_eval.session import plan_run

ROOT = Path(__file__).resolve().parents[2]
CARTPOLE = ROOT / "assets" / "ppo_cartpole"


def live_plan(tmp_path: Path, *args: str, name: str = "run"):
    """The plan `tui-eval CARTPOLE --num-envs 4 ARGS` makes (a live run, not --headless)."""
    argv = [str(CARTPOLE), "--num-envs", "4", "--log", str(tmp_path / f"{name}.sqlite"), *args]
    return plan_run(spec_from_args(build_parser().parse_args(argv)))


async def wait_for(pilot, condition, timeout: float = 60.0, step: float = 0.1, what: str = "condition"):
    """Poll `condition()` between Pilot pauses (the app keeps running) until it is truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        await pilot.pause(step)
    raise AssertionError(f"{what} not met within {timeout}s")


def plain(widget, width: int = 120) -> str:
    """What a widget draws, as plain text."""
    rendered = widget.render()
    if hasattr(rendered, "plain"):
        return rendered.plain
    from rich.console import Console

    console = Console(width=width, record=True, file=io.StringIO())
    console.print(rendered)
    return console.export_text()


def synthetic_log(path: Path, n: int = 40, paths=("evaluate", "connectors"), status: str = "running",
                  invalid_every: int = 7) -> RunLog:
    """A run log as start_engine + an engine would write it, without loading anything."""
    log = RunLog(path)
    log.set_meta(spec={"episodes": None, "device": "cpu", "return_bounds": None, "equivalence_margin": None},
                 checkpoint="/ckpt/ppo_cartpole", kind="rllib", env="CartPole-v1", seeds=[1000, None],
                 seeds_note="test", paths=list(paths), explore={p: False for p in paths},
                 facts={"algorithm": "PPO", "env": "CartPole-v1", "module": "default_policy"},
                 started_at=time.time() - 5, status=status)
    append(log, range(1000, 1000 + n), paths=paths, invalid_every=invalid_every)
    return log


def append(log: RunLog, seeds, paths=("evaluate", "connectors"), block: int = 0, invalid_every: int = 7) -> None:
    for seed in seeds:
        for i, name in enumerate(paths):
            invalid = invalid_every and seed % invalid_every == 0 and i == 1
            log.append(EpisodeRecord(path=name, seed=seed, ret=float(100 + seed % 50 + 3 * i), length=100 + seed % 50,
                                     invalid=bool(invalid), reason="non-finite observation" if invalid else None,
                                     block=block, explore=False, wall_s=0.01))


async def frame_panes(pilot, app) -> tuple:
    """The frame panel once every path's pane shows a frame: (the screen, its panes, their labels)."""
    from tui_eval.ui.frames_screen import FramesScreen

    screen = await wait_for(pilot, lambda: isinstance(app.screen, FramesScreen) and app.screen, what="the frame panel")
    panes = list(screen.panes.values())
    await wait_for(pilot, lambda: all(p.frame is not None for p in panes), timeout=90, what="a frame per path")
    return screen, panes, [p.label_text.plain for p in panes]
