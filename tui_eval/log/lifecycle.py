"""A run's lifecycle, typed: its status (in the log), its engine's state, the record its log keeps about it.

Status in the log: `loading` → `running` → `done` | `stopped` (stop, SIGTERM, q before the end) |
`interrupted` (Ctrl-C) | `failed` (a path given up, or nothing could load). The engine's state while it
runs: `running` ⇄ `paused` → `stopping` → `done`. Both are str-valued enums: the log, `--json` and the
control channel carry the same strings as ever, and a member compares equal to its string.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


class MetaStore(Protocol):
    """Where a run's record is kept (`tui_eval.log.store.RunLog`)."""

    def meta(self) -> dict[str, Any]: ...

    def set_meta(self, **values: Any) -> None: ...


class RunStatus(StrEnum):
    LOADING = "loading"
    RUNNING = "running"
    DONE = "done"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"
    FAILED = "failed"

    @property
    def live(self) -> bool:
        """The log says a process still works on it (true only while that process holds the log)."""
        return self in (RunStatus.LOADING, RunStatus.RUNNING)


class EngineState(StrEnum):
    LOADING = "loading"
    RUNNING = "running"
    PAUSED = "paused"
    STOPPING = "stopping"
    DONE = "done"


def final_status(*, completed: bool, interrupted: bool, given_up: bool) -> RunStatus:
    """How a run ended: it `completed` its episodes (no stop asked first), else Ctrl-C or a stop; a run
    that completed with a path given up failed (its comparison is void)."""
    if completed:
        return RunStatus.FAILED if given_up else RunStatus.DONE
    return RunStatus.INTERRUPTED if interrupted else RunStatus.STOPPED


def _status(value: Any) -> RunStatus | None:
    if value is None:
        return None
    if value == "finished":  # logs written before `done` was the word
        return RunStatus.DONE
    return RunStatus(value)


def _state(value: Any) -> EngineState | None:
    return None if value is None else EngineState(value)


@dataclass(frozen=True)
class RunMeta:
    """What a run's log says about the run (its `run` table), typed. Every field is optional: a log is
    written in steps (loading, running, the end), and a reader sees whichever steps were written.
    Keys this record does not know (written by a newer tui-eval) are kept in `extra`, unchanged."""

    # written when the run is claimed and planned
    spec: Mapping[str, Any] | None = None  # RunSpec.to_json()
    checkpoint: str | None = None
    kind: str | None = None
    env: str | None = None
    seeds: list | None = None  # [start, stop]
    seeds_note: str | None = None
    paths: list[str] | None = None
    explore: Mapping[str, bool] | None = None
    facts: Mapping[str, Any] | None = None
    #: False: the env is not a function of its reset seed (tui_eval/envs/seeding.py)
    repeatable_seeds: bool | None = None
    versions: Mapping[str, Any] | None = None
    started_at: float | None = None
    pid: int | None = None
    # written once the paths are loaded, and while the run goes on
    status: RunStatus | None = None
    state: EngineState | None = None
    descriptions: Mapping[str, str] | None = None
    return_bounds: list | None = None
    control: str | None = None  # the control channel's socket
    blocks: list | None = None  # [[start, stop], ...]
    workers: str | None = None
    verdict: str | None = None
    snapshot: Mapping[str, Any] | None = None  # {"paths": summaries, "comparison": ComparisonSummary.to_json()}
    resumed_at: list[float] | None = None
    incidents: Sequence[Mapping[str, Any]] | None = None  # every worker restart, loss and wait (cluster)
    exact_proof: Mapping[str, Any] | None = None  # the first differing seed's check (stats/exact_proof.py)
    contract: Mapping[str, Any] | None = None  # the export's deploy contract vs the env (envs/contract.py)
    decision: Mapping[str, Any] | None = None  # --until-decided / --fail-if-worse: the answer, when reached
    # written at the end
    finished_at: float | None = None
    error: str | None = None
    path_errors: list[Mapping[str, Any]] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunMeta:
        """The record of a log's `run` table (`RunLog.meta()`); a status or state it does not know stays
        in `extra` rather than fail the reader."""
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        values = {k: v for k, v in data.items() if k in known}
        extra = {k: v for k, v in data.items() if k not in known}
        for key, parse in (("status", _status), ("state", _state)):
            try:
                values[key] = parse(values.get(key))
            except ValueError:
                extra[key] = values.pop(key)
        return cls(**values, extra=extra)

    def to_json(self) -> dict[str, Any]:
        """The keys that are set, as the log stores them (enums as their strings)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name != "extra" and value is not None:
                out[f.name] = str(value) if isinstance(value, StrEnum) else value
        return {**out, **self.extra}

    @classmethod
    def read(cls, log: MetaStore) -> RunMeta:
        return cls.from_json(log.meta())

    def write(self, log: MetaStore) -> None:
        """Add the keys that are set to the log's record (the others stay as they are)."""
        log.set_meta(**self.to_json())

    def shown_status(self) -> str:
        """The status as the log says it ("?" when it says none)."""
        return str(self.status if self.status is not None else self.extra.get("status", "?"))
