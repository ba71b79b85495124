"""What the app shows, frozen: a `RunSnapshot` taken from a `RunSource` (a live engine, or a run log read
back). Plain Python, no Textual. The source takes it under the lock its records are added under; the app
applies it to the widgets in one `batch_update()` (the shape of bloomberg/memray's live view)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tui_eval.config.spec import SeedBlock
from tui_eval.engine.void import void_reason
from tui_eval.frames.hub import FrameView, Key
from tui_eval.records import EpisodeRecord
from tui_eval.stats import ComparisonSummary, ReturnsSnapshot
from tui_eval.views.format import workers_line


@dataclass(frozen=True)
class RunSnapshot:
    """The run's numbers at one moment, of all blocks or (`block_only`) of the current block."""

    paths: tuple[str, ...]
    state: str  # an EngineState; a log viewer also says its RunStatus, "stale" or "unreadable (...)"
    summaries: Mapping[str, dict] = field(default_factory=dict)  # PathStats.summary() per path
    comparison: ComparisonSummary | None = None
    returns: Mapping[str, ReturnsSnapshot] | None = None  # only when asked for (the histograms show)
    blocks: tuple[SeedBlock, ...] = ()
    explore: Mapping[str, bool | None] = field(default_factory=dict)
    throughput: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # (episodes/s, steps/s)
    done: Mapping[str, int] = field(default_factory=dict)  # episodes recorded per path, all blocks
    elapsed: float = 0.0
    idle_seconds: float = 0.0  # since the newest record (a log viewer's staleness)
    workers: str = ""
    block_only: bool = False
    target: int | None = None  # --episodes: the episodes asked for per path, if any
    void: str | None = None  # why the comparison is void (a path given up), else None


def engine_snapshot(engine: Any, current_block_only: bool = False, with_returns: bool = False,
                    numbers: bool = True) -> RunSnapshot:
    """A running engine's numbers now (`tui_eval.engine.core.Engine`); without `numbers` (a header redrawn
    between statistics refreshes) no summaries."""
    paths = tuple(engine.paths)
    summaries, comparison = engine.snapshot(current_block_only) if numbers else ({}, None)
    return RunSnapshot(
        paths=paths, state=str(engine.state), summaries=summaries, comparison=comparison,
        returns=engine.returns_snapshot(current_block_only) if numbers and with_returns else None,
        blocks=tuple(engine.blocks), explore={n: engine.explore_of(n) for n in paths},
        throughput={n: engine.throughput(n) for n in paths},
        done={n: s.episodes for n, s in engine.stats.paths.items()}, elapsed=engine.active_seconds(),
        workers=workers_line(engine.paths), block_only=current_block_only, target=engine.episodes,
        void=void_reason(engine.errors))


class RunSource(Protocol):
    """What the app looks at and steers (`LiveSource`, `LogSource`)."""

    paths: list[str]
    facts: dict[str, str]
    device: str
    log_path: Path

    @property
    def readonly(self) -> bool: ...

    @property
    def target(self) -> int | None: ...

    @property
    def state(self) -> str: ...

    @property
    def blocks(self) -> list[SeedBlock]: ...

    def snapshot(self, current_block_only: bool = False, with_returns: bool = False,
                 numbers: bool = True) -> RunSnapshot: ...

    def explore(self, name: str) -> bool | None: ...

    def throughput(self, name: str) -> tuple[float, float]: ...

    def meta(self) -> dict[str, Any]: ...

    def records(self) -> list[EpisodeRecord]: ...

    def frames(self, paths: list[str], key: Key | None, history: bool, size: tuple[int, int]) -> FrameView | None: ...

    def start(self) -> None: ...

    def toggle_pause(self) -> None: ...

    def resample(self) -> SeedBlock: ...

    def set_explore(self, name: str, explore: bool) -> SeedBlock: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...
