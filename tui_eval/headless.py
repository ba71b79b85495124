"""The view without a UI: the words of its progress line and of the events it writes on stderr, from what it is
handed (a snapshot, an event, the silent paths' lines). A view only: the run it shows is driven, followed and
ended by `tui_eval.runtime.headless_run`."""

from __future__ import annotations

from typing import TextIO

from tui_eval.engine.void import VOID
from tui_eval.records import BlockStarted, EpisodeFinished, EpisodeRecord, Event, PathFailed, PathNotice
from tui_eval.views.format import num
from tui_eval.views.snapshot import RunSnapshot


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


def status_line(snapshot: RunSnapshot, modules: ModuleMeans, silent: list[str] | None = None) -> str:
    """The progress line, then each module's means (multi-agent runs) and each silent path's line."""
    return progress_line(snapshot) + modules.text() + "".join(f" | {line}" for line in silent or [])


def show_event(event: Event, modules: ModuleMeans, err: TextIO) -> None:
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
