"""Frames across the pipe between a path's process and the run's: the run's FrameHub decides what is wanted
(a viewer's lease, the seeds shown, the frame settings), the path's process renders into a hub of its own, and
the new frames of its shown episodes come back and join the run's tap as if the env were local."""

from __future__ import annotations

import collections
import time
from typing import Any

from tui_eval.frames.hub import Episode, Frame, FrameHub, PathTap


def wanted(hub: FrameHub, tap: PathTap) -> tuple[Any, ...]:
    """What the run's hub wants of a path's process now (sent a few times a second)."""
    lease = max(0.0, hub._until - time.monotonic())
    with hub.lock:
        focus = list(hub.focus)
        allows_new = hub.may_take_new_seed()
    return (hub.always, lease, hub.fps, focus, allows_new, tap.every_step, tap.max_side, tap.keep_frames)


def apply_wanted(hub: FrameHub, tap: PathTap, message: tuple[Any, ...]) -> None:
    """In the path's process: its hub takes the run's wishes."""
    always, lease, fps, focus, allows_new, every_step, max_side, keep_frames = message
    hub.always, hub.fps = always, fps
    if lease > 0:
        hub.want(lease)
    tap.every_step, tap.max_side, tap.keep_frames = every_step, max_side, keep_frames
    focus = [tuple(key) for key in focus]
    with hub.lock:
        # seeds this process took that the run has not heard of yet: the run's answer predates them
        unheard = sorted(key for key in tap._keys() if not focus or key > max(focus))
        hub.run_allows_new = bool(allows_new) and not unheard
        hub.focus.clear()
        hub.focus.extend(focus + unheard)  # the run's hub is the one that decides


class FrameSender:
    """In the path's process: what its tap holds that was not sent yet."""

    def __init__(self, hub: FrameHub, tap: PathTap):
        self.hub, self.tap = hub, tap
        self._sent: dict[int, int] = {}  # id(episode) -> the step of its last frame sent (-1: none yet)
        self._reached: Any = None  # the tap's furthest seed as last sent

    def news(self) -> tuple[Any, ...] | None:
        tap = self.tap
        if not self.hub.active and not self._sent and tap.problem is None:
            return None
        with self.hub.lock:
            episodes = list(tap.episodes)
            focus = list(self.hub.focus)
        parts = []
        for episode in episodes:
            fresh = id(episode) not in self._sent
            last = self._sent.get(id(episode), -1)
            new = [f for f in list(episode.frames) if f.step > last]  # the deque keeps the newest: a step orders them
            if new or fresh or not episode.done:
                parts.append((episode.key, episode.step, episode.ret, episode.done, new))
            if new:
                last = new[-1].step
            self._sent[id(episode)] = last
        alive = {id(e) for e in episodes}
        self._sent = {k: v for k, v in self._sent.items() if k in alive}
        if not parts and tap.problem is None and tap.reached == self._reached:
            return None
        self._reached = tap.reached
        return (parts, tap.problem, tap.reached, tap.render_fps, focus)


def receive(hub: FrameHub, tap: PathTap, news: tuple[Any, ...]) -> None:
    """In the run's process: the path's frames join its tap."""
    parts, problem, reached, render_fps, focus = news
    tap.problem, tap.render_fps = problem, render_fps
    if reached is not None:
        tap.reached = tuple(reached)
    with hub.lock:
        for key in sorted(tuple(k) for k in focus):
            if not hub.focus or key > max(hub.focus):  # a seed the path's process took since it last heard
                hub.take_seed(key)
        by_key = {ep.key: ep for ep in tap.episodes}
        for key, step, ret, done, frames in parts:
            key = tuple(key)
            episode = by_key.get(key)
            if episode is None:
                episode = Episode(tap.path, key, collections.deque(maxlen=tap.keep_frames))
                tap.episodes.append(episode)
                by_key[key] = episode
            episode.frames.extend(Frame(f.step, f.ret, f.image) for f in frames)
            episode.step, episode.ret, episode.done = step, ret, done
            episode.last_at = time.monotonic()
            tap.current = episode
