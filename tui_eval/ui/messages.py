"""Messages the app's background threads post to it (post_message is thread-safe)."""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from tui_eval.records import EpisodeRecord


class PathLoaded(Message):
    """start_engine finished loading one path."""

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__()
        self.name, self.seconds = name, seconds


class EngineReady(Message):
    def __init__(self, engine) -> None:
        super().__init__()
        self.engine = engine


class LoadFailed(Message):
    """start_engine raised: BadInput (exit code 2) or something unexpected (exit code 1)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__()
        self.message, self.exit_code = message, exit_code


class ExportDone(Message):
    def __init__(self, csv_path: Path, json_path: Path, count: int, seconds: float) -> None:
        super().__init__()
        self.csv_path, self.json_path, self.count, self.seconds = csv_path, json_path, count, seconds


class ExportFailed(Message):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message


class SeedFound(Message):
    """Every path's records of one seed, read from the log."""

    def __init__(self, seed: int, block: int, records: list[EpisodeRecord]) -> None:
        super().__init__()
        self.seed, self.block, self.records = seed, block, records
