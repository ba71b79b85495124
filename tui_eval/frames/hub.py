"""Frames of the one env per path that is shown, kept per seed so that two paths can be seen on the same seed.

Rendering stays off the hot path:
- A run has one `FrameHub`, idle until a viewer asks for frames (`want`, a lease of a few seconds that
  the viewer renews, so an attached viewer that goes away stops the rendering).
- Each path's envs reach their path's `PathTap` through the seed feed, as they reach the watchdog's
  heartbeat. At a seeded reset the tap may make that env the shown one; every other env only checks
  one attribute per step (`GuardedEnv.shown is None`).
- Only the shown env renders (`render_mode="rgb_array"` is set on it alone for the render call, so its
  steps run as unrendered), or its observation is the frame when it is an image (CarRacing). At most `fps` frames a
  second are taken, whatever the evaluation speed; the rest are dropped, never queued. The one frame taken over
  that budget is a shown episode's last; a path takes at most `fps` seeds a second that no path shows yet, so
  episodes shorter than a frame do not each render their first and last frames. Frames are kept
  scaled down, the last KEEP_FRAMES of each of the last KEEP_EPISODES episodes per path.

Same seed on both paths: the paths walk the same seeds in the same order at different speeds. A tap
whose shown episode ended shows the next seed it resets with, unless another path showed a seed that
this path has yet to reach: then it waits for that seed. A seed no path shows yet is taken only once every
path has played the newest seed shown (or passed it), so a path many times faster than another waits for it
rather than running away with seeds the slower one will never show. The slower path plays the seeds the faster
one showed, and a seed that both have played (or are playing) can be shown side by side. A path in a process
of its own asks the run's hub (tui_eval/isolation/frames_relay.py).
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tui_eval.frames.images import as_rgb, fit, is_image_space, quiet_pygame, shrink

#: (block, seed): orders seeds as the paths walk them
Key = tuple[int, int]

MAX_SIDE = 256  # pixels on a kept frame's longer side: enough for a terminal panel, small to keep and send
KEEP_FRAMES = 64  # per episode: what ←/→ step through
KEEP_EPISODES = 6  # per path
LEASE_S = 5.0  # a viewer that stops asking stops the rendering after this long
STALE_S = 5.0  # a shown env silent this long (its path failed, was rebuilt) is released
FOCUS_WAIT_S = 20.0  # a seed shown waits this long at most for the other paths before a newer one is taken


@dataclass(frozen=True)
class Frame:
    step: int
    ret: float  # the return so far, up to and including this step
    image: np.ndarray  # (H, W, 3) uint8


@dataclass
class Episode:
    """The shown env's frames of one episode of one path."""

    path: str
    key: Key
    frames: collections.deque[Frame]
    step: int = 0
    ret: float = 0.0
    done: bool = False
    last_at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class Pane:
    """One path's side of a view: frozen, for a widget or the wire."""

    path: str
    key: Key | None
    step: int = 0
    ret: float = 0.0
    done: bool = False
    frames: tuple[Frame, ...] = ()
    problem: str | None = None  # why this path shows no frames (the env cannot render)


@dataclass(frozen=True)
class FrameView:
    key: Key | None  # the seed shown
    keys: tuple[Key, ...]  # seeds with frames of every path in the view, newest first
    panes: tuple[Pane, ...]


class FrameHub:
    """The frames of a run (one per engine); idle, and costing nothing, until a viewer wants frames."""

    def __init__(self, fps: float = 10.0):
        self.fps = fps
        self.lock = threading.Lock()
        self.always = False  # on for good (tui-eval record, the app with --frames); else leased by viewers
        self._until = 0.0
        self._taps: dict[str, PathTap] = {}
        self.focus: collections.deque[Key] = collections.deque(maxlen=4 * KEEP_EPISODES)
        self._focused_at = 0.0  # when the newest seed of `focus` was taken
        #: in a path's own process, whether the run's hub lets it take a new seed (None: this hub decides)
        self.run_allows_new: bool | None = None

    @property
    def active(self) -> bool:
        return self.always or time.monotonic() < self._until

    def want(self, seconds: float = LEASE_S) -> None:
        """A viewer wants frames for the next `seconds` (it renews while it shows them)."""
        self._until = max(self._until, time.monotonic() + seconds)

    def tap(self, path: str) -> PathTap:
        with self.lock:
            if path not in self._taps:
                self._taps[path] = PathTap(self, path)
            return self._taps[path]

    def may_take_new_seed(self) -> bool:
        """Whether a path may show a seed that no path shows yet (the caller holds the lock): every path that can
        show frames has played the newest seed shown or passed it, or that seed has waited FOCUS_WAIT_S."""
        if self.run_allows_new is not None:
            return self.run_allows_new
        if not self.focus or time.monotonic() - self._focused_at > FOCUS_WAIT_S:
            return True
        newest = max(self.focus)
        return all(tap.problem is not None or newest in tap._keys() or (tap.reached or newest) > newest
                   for tap in self._taps.values())

    def take_seed(self, key: Key) -> None:
        """`key` is shown from now on (the caller holds the lock)."""
        self.focus.append(key)
        self._focused_at = time.monotonic()
        if self.run_allows_new is not None:
            self.run_allows_new = False  # until the run has heard of this seed

    def view(self, paths: list[str], key: Key | None = None, history: bool = False,
             size: tuple[int, int] | None = None) -> FrameView:
        """The seed `key` (default: the newest that every one of `paths` has frames of, else the newest any
        has) with each path's newest frame, or every kept frame with `history`; scaled to fit `size`."""
        taps = [self.tap(p) for p in paths]
        with self.lock:
            held = [{ep.key: ep for ep in tap.episodes} for tap in taps]
            shared = [k for k in sorted(set.intersection(*(set(h) for h in held)), reverse=True)]
            if key is None or not any(key in h for h in held):
                key = shared[0] if shared else max((k for h in held for k in h), default=None)
            panes = tuple(_pane(tap, h.get(key) if key is not None else None, history, size)
                          for tap, h in zip(taps, held))
        return FrameView(key, tuple(shared), panes)


def _pane(tap: PathTap, episode: Episode | None, history: bool, size: tuple[int, int] | None) -> Pane:
    if episode is None:
        return Pane(tap.path, None, problem=tap.problem)
    frames = list(episode.frames) if history else list(episode.frames)[-1:]
    if size is not None:
        frames = [Frame(f.step, f.ret, fit(f.image, *size)) for f in frames]
    return Pane(tap.path, episode.key, episode.step, episode.ret, episode.done, tuple(frames), tap.problem)


class PathTap:
    """One path's frames: which of its envs is shown, and that env's episodes. Called from the path's
    worker thread (the envs), read by viewers under the hub's lock."""

    def __init__(self, hub: FrameHub, path: str):
        self.hub = hub
        self.path = path
        self.episodes: collections.deque[Episode] = collections.deque(maxlen=KEEP_EPISODES)
        self.current: Episode | None = None
        self.env: Any = None  # the env shown
        self.reached: Key | None = None  # the furthest seed this path has reset with
        self.problem: str | None = None
        # tui-eval record takes every step, larger, and keeps the whole episode
        self.every_step = False
        self.max_side = MAX_SIDE
        self.keep_frames: int | None = KEEP_FRAMES
        self.render_fps: float | None = None  # the shown env's metadata["render_fps"]
        self._from_obs = False
        self._next_at = 0.0
        self._taken_at = -1e9  # when this path last took a seed no path showed yet

    # ---- from the envs
    def on_reset(self, env: Any, key: Key, obs: Any) -> bool:
        """A seeded reset of one of the path's envs; True when that env is now the one shown."""
        if self.env is env:
            self._release()
        if self.reached is None or key > self.reached:
            self.reached = key
        hub = self.hub
        if not hub.active or self.problem is not None:
            return False
        current = self.current
        if current is not None and not current.done and time.monotonic() - current.last_at < STALE_S:
            return False  # one env shown at a time
        with hub.lock:
            if key not in hub.focus:
                if not self.every_step and time.monotonic() - self._taken_at < 1.0 / max(hub.fps, 0.1):
                    return False  # at most `fps` new seeds a second: short episodes stay unrendered
                if any(f > key and f not in self._keys() for f in hub.focus):
                    return False  # another path showed a seed this path has yet to reach: wait for it
                if not hub.may_take_new_seed():
                    return False  # the other paths have yet to play the newest seed shown
                hub.take_seed(key)
                self._taken_at = time.monotonic()
        self.problem = self._prepare(env)
        if self.problem is not None:
            return False
        episode = Episode(self.path, key, collections.deque(maxlen=self.keep_frames))
        with hub.lock:
            self.episodes.append(episode)
        self.current, self.env = episode, env
        self._next_at = 0.0
        self._capture(env, obs, episode)
        return self.env is env

    def on_step(self, env: Any, obs: Any, reward: float, done: bool) -> None:
        """A step of the shown env (only that env calls this)."""
        episode = self.current
        if episode is None or self.env is not env:
            env.shown = None
            return
        episode.step += 1
        episode.ret += float(reward)
        now = time.monotonic()
        episode.last_at = now
        if done or self.every_step or now >= self._next_at:
            self._capture(env, obs, episode)
        if done:
            episode.done = True
            self._release()

    # ---- inside
    def _keys(self) -> set[Key]:
        return {ep.key for ep in self.episodes}

    def _prepare(self, env: Any) -> str | None:
        """Make `env` able to give frames; why not, when it cannot."""
        self._from_obs = is_image_space(env.observation_space)
        self.render_fps = (getattr(env, "metadata", None) or {}).get("render_fps")
        if self._from_obs or env.render_mode == "rgb_array":
            return None
        modes = list((getattr(env, "metadata", None) or {}).get("render_modes") or [])
        if "rgb_array" not in modes:
            return (f"this env cannot show frames: it does not render rgb_array (render_modes: "
                    f"{', '.join(modes) or 'none'}) and its observations are not images")
        quiet_pygame()
        return None

    def _render(self, env: Any) -> Any:
        """One frame. An env made without a render mode gets rgb_array for this call only: its steps never
        see a render mode, so they cost and do what they do unrendered (LunarLander adds exhaust particle
        bodies to its world while it has one: 3-4x slower steps)."""
        if env.render_mode == "rgb_array":
            return env.render()
        base = env.unwrapped
        mode, base.render_mode = base.render_mode, "rgb_array"
        try:
            return env.render()
        finally:
            base.render_mode = mode

    def _capture(self, env: Any, obs: Any, episode: Episode) -> None:
        self._next_at = time.monotonic() + 1.0 / max(self.hub.fps, 0.1)
        try:
            image = as_rgb(obs if self._from_obs else self._render(env))
        except Exception as exc:  # a renderer that fails must never stop the run
            image, why = None, f"{type(exc).__name__}: {exc}"
        else:
            why = "render() gave no picture"
        if image is None:
            self.problem = f"this env cannot show frames ({why})"
            self._release()
            return
        image = shrink(image, self.max_side)
        frame = Frame(episode.step, episode.ret, image)
        with self.hub.lock:
            episode.frames.append(frame)

    def _release(self) -> None:
        env, self.env = self.env, None
        if env is not None:
            env.shown = None
