"""The run's SQLite log: every finished episode is appended here before any view sees it.

WAL mode with a commit per record: a run killed with SIGKILL keeps every episode that finished.
Readers (the headless table, `attach`, exports) open the same file while the run is live.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tui_eval.records import EpisodeRecord

SCHEMA = """
CREATE TABLE IF NOT EXISTS run (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL, seed INTEGER NOT NULL, block INTEGER NOT NULL,
    ret REAL, length INTEGER NOT NULL, success INTEGER, invalid INTEGER NOT NULL,
    reason TEXT, wall_s REAL NOT NULL, explore INTEGER, finished_at REAL NOT NULL, modules TEXT,
    world INTEGER, start TEXT, termination TEXT, reward_terms TEXT
);
"""

_COLUMNS = ("path, seed, block, ret, length, success, invalid, reason, wall_s, explore, modules, world, start, "
            "termination, reward_terms")
#: columns added after the first logs were written: (name, type); older logs get them empty
_LATER_COLUMNS = (("modules", "TEXT"), ("world", "INTEGER"), ("start", "TEXT"), ("termination", "TEXT"),
                  ("reward_terms", "TEXT"))


def _to_row(rec: EpisodeRecord) -> tuple:
    return (rec.path, rec.seed, rec.block, rec.ret, rec.length,
            None if rec.success is None else int(rec.success), int(rec.invalid), rec.reason,
            rec.wall_s, None if rec.explore is None else int(rec.explore),
            json.dumps([list(m) for m in rec.modules]) if rec.modules else None, rec.world, rec.start,
            rec.termination, json.dumps([list(t) for t in rec.reward_terms]) if rec.reward_terms else None)


def _from_row(row: tuple) -> EpisodeRecord:
    (path, seed, block, ret, length, success, invalid, reason, wall_s, explore, modules, world, start, termination,
     reward_terms) = row
    if not isinstance(path, str):
        raise ValueError(f"path {path!r}")
    return EpisodeRecord(path=path, seed=int(seed), ret=float("nan") if ret is None else float(ret), length=int(length),
                         success=None if success is None else bool(success), invalid=bool(invalid),
                         reason=reason, wall_s=float(wall_s), block=int(block),
                         explore=None if explore is None else bool(explore),
                         modules=tuple((m, float(r), int(n)) for m, r, n in json.loads(modules)) if modules else (),
                         world=world, start=start, termination=termination,
                         reward_terms=tuple((t, float(v)) for t, v in json.loads(reward_terms)) if reward_terms else ())


def _readable(row: tuple) -> EpisodeRecord | None:
    """The row's record, or None for a row damaged on disk (garbage where a number or JSON was): the episodes
    around it are still read."""
    try:
        return _from_row(row)
    except (ValueError, TypeError, KeyError):  # JSONDecodeError is a ValueError
        return None


def _add_later_columns(db: sqlite3.Connection) -> None:
    """Logs written before episodes carried per-module returns, worlds, starts or terms lack those columns: add them."""
    names = {row[1] for row in db.execute("PRAGMA table_info(episodes)")}
    for name, kind in _LATER_COLUMNS:
        if name not in names:
            db.execute(f"ALTER TABLE episodes ADD COLUMN {name} {kind}")


def _plain(value: Any) -> Any:
    """numpy scalars and sets in metadata, as JSON has them."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


class LogNotWritten(sqlite3.OperationalError):
    """The log took no more: the disk is full, or the file may grow no more."""


def _said(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


class RunLog:
    """Append-only episode log of one run (thread-safe for writers)."""

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = Path(path)
        if readonly:
            if not self.path.is_file():
                raise FileNotFoundError(self.path)
            self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a commit survives a killed process (not a power cut), and is cheap.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            _add_later_columns(self._db)
        self._columns = _COLUMNS
        if readonly:  # an older log, read as it is: the columns it lacks read as NULL
            names = {row[1] for row in self._db.execute("PRAGMA table_info(episodes)")}
            for name, _ in _LATER_COLUMNS:
                if name not in names:
                    self._columns = self._columns.replace(f", {name}", ", NULL")
        self._lock = threading.Lock()
        #: why a write failed (a full disk, a file-size limit); the log takes nothing more after it
        self.write_failure: str | None = None

    # -- writing
    def set_meta(self, **values: Any) -> None:
        """Write run facts; once the file takes no more (no room), they are dropped: the episodes are what counts,
        and the next `append` says why."""
        with self._lock:
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO run (key, value) VALUES (?, ?)",
                    [(k, json.dumps(v, default=_plain)) for k, v in values.items()],
                )
            except sqlite3.OperationalError as exc:
                self.write_failure = self.write_failure or _said(exc)

    def append(self, rec: EpisodeRecord) -> None:
        """Append a finished episode; LogNotWritten when the file takes no more (no room)."""
        with self._lock:
            if self.write_failure is not None:
                raise LogNotWritten(self.write_failure)
            try:
                self._db.execute(
                    f"INSERT INTO episodes ({_COLUMNS}, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (*_to_row(rec), time.time()),
                )
            except sqlite3.OperationalError as exc:
                self.write_failure = _said(exc)
                raise LogNotWritten(self.write_failure) from None

    # -- reading
    def meta(self) -> dict[str, Any]:
        with self._lock:
            rows = self._db.execute("SELECT key, value FROM run").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def records(self, *, after_id: int = 0) -> list[EpisodeRecord]:
        return [rec for _, rec in self.records_with_ids(after_id=after_id)]

    def records_with_ids(self, *, after_id: int = 0, limit: int | None = None) -> Iterator[tuple[int, EpisodeRecord]]:
        """Records after `after_id` in log order, with their ids; at most `limit` (a reader's chunk) when given."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT id, {self._columns} FROM episodes WHERE id > ? ORDER BY id LIMIT ?",
                (after_id, -1 if limit is None else int(limit)),
            ).fetchall()
        return iter([(row[0], rec) for row in rows if (rec := _readable(row[1:])) is not None])

    def records_for_seed(self, seed: int, block: int | None = None) -> list[EpisodeRecord]:
        """Every path's records of one seed (of one block when given), in log order."""
        query, args = f"SELECT {self._columns} FROM episodes WHERE seed = ?", [seed]
        if block is not None:
            query, args = query + " AND block = ?", [seed, block]
        with self._lock:
            rows = self._db.execute(query + " ORDER BY id", args).fetchall()
        return [rec for row in rows if (rec := _readable(row)) is not None]

    def last_id(self) -> int:
        """The id of the newest record (0 when none): a reader's snapshot point."""
        with self._lock:
            return self._db.execute("SELECT COALESCE(MAX(id), 0) FROM episodes").fetchone()[0]

    def last_finished_at(self) -> float | None:
        """Wall time (time.time()) the newest record was appended, or None: how fresh a log is."""
        with self._lock:
            row = self._db.execute("SELECT finished_at FROM episodes ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else row[0]

    def counts_by_path(self) -> dict[str, int]:
        """Episodes recorded per path."""
        with self._lock:
            rows = self._db.execute("SELECT path, COUNT(*) FROM episodes GROUP BY path").fetchall()
        return dict(rows)

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
