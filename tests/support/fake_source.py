"""A FAKE RunSource that shows scripted RunSnapshots: no engine, no run log, no policy.

Why a fake: the app is a view over snapshots (tui_eval/views/snapshot.py); its layout at each size, what its
header and verdict bar say in each state, and which of the source's controls each key calls depend on
the snapshot and nothing behind it. A script of snapshots says exactly what the screen must show, at
once, where a real engine would take seconds to reach that state and never reach some (a stale log, a
verdict chosen by the test). The live engine and the log reader themselves are tested in
tests/integration/ui/ (the app on an engine) and tests/unit/test_run_snapshot.py (the log reader).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from tui_eval.config.spec import SeedBlock
from tui_eval.frames.hub import FrameView, Key
from tui_eval.records import BlockStarted, EpisodeRecord, StateChanged
from tui_eval.ui.inbox import Inbox
from tui_eval.views.snapshot import RunSnapshot


class FakeSource:
    """A FAKE RunSource (see the module docstring): `snapshot()` gives the script's current snapshot,
    `advance()` moves to the next one and posts its state and records to the app's inbox, and every
    control the app calls is noted in `calls` (pause flips running/paused, resample adds a block)."""

    readonly = False

    def __init__(self, inbox: Inbox, script: list[RunSnapshot], log_path: Path, *,
                 records: list[EpisodeRecord] | None = None, target: int | None = None,
                 meta: dict[str, Any] | None = None):
        self.inbox = inbox
        self.script = list(script)
        self.at = 0
        self.paths = list(script[0].paths)
        self.facts = {"checkpoint": "/fake/checkpoint", "kind": "fake", "algorithm": "PPO", "env": "FakeEnv-v0"}
        self.device = "cpu"
        self.log_path = log_path
        self._records = list(records or [])
        self._target = target
        self._meta = dict(meta or {})
        self._state = script[0].state
        self._blocks = list(script[0].blocks) or [SeedBlock(1000, None)]
        self._explore = dict(script[0].explore)
        self.calls: list[tuple] = []

    # ---- the script
    def advance(self, records: tuple[EpisodeRecord, ...] = ()) -> RunSnapshot:
        """The next snapshot of the script; its state and `records` are posted as the engine would."""
        self.at = min(self.at + 1, len(self.script) - 1)
        shown = self.script[self.at]
        self._records.extend(records)
        if records:
            self.inbox.put_many(list(records))
        self._set_state(shown.state)
        return shown

    def _set_state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self.inbox.put(StateChanged(state))

    # ---- what the app reads
    @property
    def target(self) -> int | None:
        return self._target

    @property
    def state(self) -> str:
        return self._state

    @property
    def blocks(self) -> list[SeedBlock]:
        return self._blocks

    def snapshot(self, current_block_only: bool = False, with_returns: bool = False,
                 numbers: bool = True) -> RunSnapshot:
        shown = self.script[self.at]
        return dataclasses.replace(shown, state=self._state, blocks=tuple(self._blocks), block_only=current_block_only,
                                   explore=dict(self._explore), returns=shown.returns if with_returns else None,
                                   **({} if numbers else {"summaries": {}, "comparison": None}))

    def explore(self, name: str) -> bool | None:
        return self._explore.get(name)

    def throughput(self, name: str) -> tuple[float, float]:
        return self.script[self.at].throughput.get(name, (0.0, 0.0))

    def meta(self) -> dict[str, Any]:
        return dict(self._meta)

    def records(self) -> list[EpisodeRecord]:
        return list(self._records)

    def frames(self, paths: list[str], key: Key | None, history: bool, size: tuple[int, int]) -> FrameView | None:
        return None

    # ---- controls: noted, and answered as an engine would
    def start(self) -> None:
        self.calls.append(("start",))

    def toggle_pause(self) -> None:
        self.calls.append(("toggle_pause",))
        self._set_state("running" if self._state == "paused" else "paused")

    def resample(self) -> SeedBlock:
        self.calls.append(("resample",))
        last = self._blocks[-1]
        block = SeedBlock(last.start + 1000, None)
        self._blocks.append(block)
        self.inbox.put(BlockStarted(len(self._blocks) - 1, block, "resampled"))
        return block

    def set_explore(self, name: str, explore: bool) -> SeedBlock:
        self.calls.append(("set_explore", name, explore))
        self._explore[name] = explore
        return self.resample()

    def stop(self) -> None:
        self.calls.append(("stop",))

    def close(self) -> None:
        self.calls.append(("close",))
