"""The view without a UI: a progress line on stderr and a line per path given up. A view only: the run
it shows is driven (and ended) by `tui_eval.runtime.headless_run`."""

from __future__ import annotations

import queue
import time
from typing import TextIO

from tui_eval.engine.core import Engine
from tui_eval.engine.stall import EngineSilence
from tui_eval.engine.void import VOID
from tui_eval.log.lifecycle import EngineState
from tui_eval.records import BlockStarted, EpisodeFinished, EpisodeRecord, Event, PathFailed, PathNotice
from tui_eval.views.format import num
from tui_eval.views.snapshot import RunSnapshot, engine_snapshot


def progress_line(snapshot: RunSnapshot) -> str:
    """One line of the run's progress, from a frozen snapshot (the app's view reads the same record)."""
    parts = []
    for name, summary in snapshot.summaries.items():
        total = f"/{snapshot.target}" if snapshot.target else ""
        eps_s, _ = snapshot.throughput.get(name, (0.0, 0.0))
        parts.append(f"{name} {summary['episodes']}{total} mean {num(summary['mean'], 1)} ({eps_s:.1f} ep/s)")
    comparison = snapshot.comparison
    verdict = f" | {comparison.verdict}" if comparison is not None else ""
    if comparison is not None and comparison.per_seed == "identical":
        n = comparison.identical_pairs
        verdict = f" | identical on {n}/{n} seeds ({comparison.verdict})"
    if comparison is not None and snapshot.void:
        verdict = f" | {VOID} (a path was given up)"
    return f"[{snapshot.elapsed:6.1f}s] " + " | ".join(parts) + verdict


def follow(engine: Engine, events: queue.Queue[Event], err: TextIO) -> None:
    """Progress on `err` until every path finished: a line redrawn in place on a terminal, else every 5 s."""
    tty = err.isatty()
    last_draw = 0.0
    silence = EngineSilence(engine)
    modules = ModuleMeans(list(engine.paths))  # multi-agent runs: each module's mean per path
    while engine.state != EngineState.DONE:
        try:
            event = events.get(timeout=0.2)
        except queue.Empty:
            event = None
        if event is not None:
            silence.on_event(event)
            _show(event, modules, err)
        now = time.monotonic()
        if now - last_draw >= (0.5 if tty else 5.0):
            last_draw = now
            quiet = "".join(f" | {line}" for line in silence.lines())
            err.write(("\r" if tty else "") + progress_line(engine_snapshot(engine)) + modules.text() + quiet
                      + ("" if tty else "\n"))
            err.flush()
    engine.wait()
    while not events.empty():  # what the last episodes sent as the run ended belongs in the last line
        _show(events.get_nowait(), modules, err)
    err.write(("\r" if tty else "") + progress_line(engine_snapshot(engine)) + modules.text() + "\n")


def _show(event: Event, modules: ModuleMeans, err: TextIO) -> None:
    """One event: an episode's module returns counted, a failure, notice or new seed block written."""
    if isinstance(event, EpisodeFinished):
        modules.add(event.record)
    if isinstance(event, PathFailed):
        err.write(f"\npath {event.path} failed ({event.message}); "
                  + ("giving up on it\n" if event.gave_up else f"loaded afresh (restart {event.restarts})\n"))
    elif isinstance(event, PathNotice):
        err.write(f"\npath {event.path}: {event.message}\n")
    elif isinstance(event, BlockStarted):
        err.write(f"\nseed block {event.index}: {event.block} ({event.reason})\n")


def report_given_up(failed: list[PathFailed], err: TextIO) -> bool:
    """One line per path given up: what failed, the error, what to try. True when there was one."""
    for failure in failed:
        err.write(f"tui-eval: path {failure.path} failed and was given up after {failure.restarts} tries: "
                  f"{failure.message}; {failure_hint(failure.message)}\n")
    err.flush()
    return bool(failed)


def failure_hint(message: str) -> str:
    """What to try, from the error a path failed with."""
    shape_words = ("dtype", "shape", "size mismatch", "mat1 and mat2", "expected scalar type", "must match")
    if any(word in message for word in shape_words):
        return ("the policy does not accept this env's observations: run the env it was trained on "
                "(--import the code that registers it, --env, --env-config)")
    return "tui-eval attach RUN --headless prints the traceback from the run's log"


class ModuleMeans:
    """Each module's mean return per path so far, from the episodes as they finish (the progress line's part)."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = list(paths)
        self._sums: dict[str, dict[str, list[float]]] = {}  # module -> path -> [sum, count]

    def add(self, rec: EpisodeRecord) -> None:
        for module, ret, _ in rec.modules:
            total = self._sums.setdefault(module, {p: [0.0, 0] for p in self.paths}).setdefault(rec.path, [0.0, 0])
            total[0] += ret
            total[1] += 1

    def text(self) -> str:
        """" | p0 evaluate 19.2 connectors 19.2 | p1 ..."; "" for a single-agent run."""
        return "".join(" | " + module + "".join(f" {path} {num(s / n if n else None, 1)}"
                                                for path, (s, n) in paths.items())
                       for module, paths in self._sums.items())
