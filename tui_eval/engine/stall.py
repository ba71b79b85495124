"""Noticing a path that has produced no episode for much longer than its episodes take.

A path can spin without failing: a loop that never reports what it runs, an env that never ends its
episodes. The run then looks alive (CPU busy, no error) while one path's count stays put. `StallWatch`
says so: a path is silent when no episode of it ended for longer than `max(min_silence_s, factor x its
longest episode so far)`, from the run's start for the first one. The clock is the caller's (the
engine's active seconds, which leave pauses out), so a test can drive it with any numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui_eval.records import EpisodeFinished, PathFailed, PathFinished

MIN_SILENCE_S = 60.0  # never sooner than this: loading and the first episodes take time
FACTOR = 3.0  # "much longer" than the longest episode seen


@dataclass
class _Seen:
    last: float  # when its last episode ended (or the watch started)
    longest: float = 0.0  # its longest episode, in wall seconds
    finished: bool = False


@dataclass
class StallWatch:
    """Per path, when its last episode ended; `silent(now)` lists the paths quiet for too long."""

    paths: list[str]
    start: float
    min_silence_s: float = MIN_SILENCE_S
    factor: float = FACTOR
    _seen: dict[str, _Seen] = field(init=False)

    def __post_init__(self) -> None:
        self._seen = {name: _Seen(last=self.start) for name in self.paths}

    def episode(self, path: str, wall_s: float, now: float) -> None:
        """An episode of `path` ended at `now` after `wall_s` seconds."""
        seen = self._seen.get(path)
        if seen is not None:
            seen.last = now
            seen.longest = max(seen.longest, float(wall_s or 0.0))

    def finished(self, path: str) -> None:
        """The path has no more episodes to run (done, or given up): its silence is expected."""
        if path in self._seen:
            self._seen[path].finished = True

    def limit(self, path: str) -> float:
        """Seconds of silence after which `path` counts as silent."""
        return max(self.min_silence_s, self.factor * self._seen[path].longest)

    def silent(self, now: float) -> dict[str, float]:
        """{path: seconds since its last episode} for each running path silent longer than its limit."""
        return {name: now - seen.last for name, seen in self._seen.items()
                if not seen.finished and now - seen.last > self.limit(name)}


def silence_line(path: str, seconds: float, doing: str | None) -> str:
    """"evaluate: no episode for 120 s (doing)"."""
    return f"{path}: no episode for {seconds:.0f} s" + (f" ({doing})" if doing else "")


def what_it_does(path) -> str | None:
    """What a path is doing now: what it says (`InferencePath.activity`), else its vector env's progress
    (`path.env`); None when neither can be read. Never raises."""
    from tui_eval.paths.activity import envs_activity

    try:
        activity = getattr(path, "activity", None)
        return (activity() if activity is not None else None) or envs_activity(getattr(path, "env", None))
    except Exception:  # read from another thread while the path runs: a best-effort look
        return None


class EngineSilence:
    """A StallWatch fed with a running engine's events, on its active clock (pauses left out)."""

    def __init__(self, engine: Any):
        self.engine = engine
        self.watch = StallWatch(list(engine.paths), start=engine.active_seconds(), min_silence_s=MIN_SILENCE_S)

    def record(self, rec: Any) -> None:
        self.watch.episode(rec.path, rec.wall_s, self.engine.active_seconds())

    def on_event(self, event: Any) -> None:
        if isinstance(event, EpisodeFinished):
            self.record(event.record)
        elif isinstance(event, PathFinished) or (isinstance(event, PathFailed) and event.gave_up):
            self.watch.finished(event.path)

    def lines(self) -> list[str]:
        """One line per silent path, with what it is doing when it says."""
        silent = self.watch.silent(self.engine.active_seconds())
        return [silence_line(name, seconds, what_it_does(self.engine.paths.get(name)))
                for name, seconds in silent.items()]
