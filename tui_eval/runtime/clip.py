"""`tui-eval record CKPT --seed S --out FILE`: one seed played by each path, every step rendered, written as
one clip with the paths side by side at the env's render fps.

The paths are the run's own (built by the checkpoint's kind, envs behind tui-eval's GuardedEnv); each plays
the one seed on one env, which is the env shown: its frames come from `render()` (rgb_array, set on that
env alone) or from its observation when that is an image.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui_eval.config.spec import RunSpec, SeedBlock
from tui_eval.errors import BadInput
from tui_eval.feed import Heartbeat, Seed
from tui_eval.frames.clip import check_output, compose, write_clip
from tui_eval.frames.hub import Episode, FrameHub, PathTap

CLIP_SIDE = 400  # pixels on a clip frame's longer side, per path
DEFAULT_FPS = 30.0  # for an env that states no render_fps


class OneSeed:
    """The SeedFeed of a recording: hands out one seed once; stops the path when its env cannot render."""

    heartbeat: Heartbeat | None = None

    def __init__(self, seed: int, tap: PathTap):
        self._seed: Seed | None = (seed, 0)
        self.frames = tap

    def take(self) -> Seed | None:
        seed, self._seed = self._seed, None
        return seed

    @property
    def cancelled(self) -> bool:
        return self.frames.problem is not None


def record(spec: RunSpec, seed: int, out: Path, stride: int = 1, err: Any = None) -> int:
    """Play `seed` on every path of `spec` and write the clip; BadInput for what cannot be recorded."""
    from tui_eval.session import plan_run, share_cpu_threads
    from tui_eval.user.code import import_user_code

    err = err or sys.stderr
    check_output(out)
    if seed < 0:
        raise BadInput(f"--seed must be a seed (an integer ≥ 0), got {seed}")
    if stride < 1:
        raise BadInput(f"--stride must be at least 1, got {stride}")
    for item in spec.imports:
        import_user_code(item)
    spec = replace(spec, seeds=SeedBlock(seed, seed + 1), episodes=1, num_envs=1, log=str(out) + ".sqlite")
    spec.in_process = True  # a clip builds its paths here, one seed each
    plan = plan_run(spec)
    share_cpu_threads(1, spec.device)
    hub = FrameHub()
    hub.always = True
    episodes: dict[str, Episode] = {}
    fps = DEFAULT_FPS
    for name in plan.paths:
        err.write(f"recording seed {seed} on path {name}…\n")
        err.flush()
        tap = hub.tap(name)
        tap.every_step, tap.keep_frames, tap.max_side = True, None, CLIP_SIDE
        episode, fps = _play(plan, name, OneSeed(seed, tap))
        if tap.problem is not None or episode is None:
            raise BadInput(f"path {name}: {tap.problem or 'no frame was taken'}; record needs an env that renders "
                           "rgb_array frames or whose observations are images")
        episodes[name] = episode
    pictures = compose(episodes, seed, stride)
    write_clip(out, pictures, fps / stride)
    ends = ", ".join(f"{n} {ep.step} steps, return {ep.ret:.2f}" for n, ep in episodes.items())
    print(f"{out}: {len(pictures)} frames at {fps / stride:g} fps, seed {seed} ({ends})")
    return 0


def _play(plan, name: str, feed: OneSeed) -> tuple[Episode | None, float]:
    """Build path `name`, play the feed's seed, and return the shown env's episode and its render fps."""
    from tui_eval.errors import first_line

    try:
        path = plan.kind.build_path(name, plan.explore[name])
    except BadInput:
        raise
    except Exception as exc:
        raise BadInput(f"could not load path {name!r}: {first_line(exc, 180)}") from exc
    try:
        path.run(feed, lambda record: None)
    finally:
        path.close()
    tap = feed.frames
    return (tap.episodes[-1] if tap.episodes else None), float(tap.render_fps or DEFAULT_FPS)
