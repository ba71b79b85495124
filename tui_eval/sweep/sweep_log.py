"""A sweep's log: the same SQLite log as a run's (tui_eval/log/store.py), so `ls`, `attach`, `stop` and `resume`
find it as they find runs. Its `run` table says it is a sweep (`kind` "sweep"), with the command line that
resumes it and every checkpoint; each finished episode is appended at once, its checkpoint as its path and its
round as its block; the board after every round is kept for `attach` and `ls`."""

from __future__ import annotations

import dataclasses
from typing import Any

from tui_eval.log.store import RunLog
from tui_eval.records import EpisodeRecord

KIND = "sweep"


def is_sweep(meta: dict[str, Any]) -> bool:
    return meta.get("kind") == KIND


def short_outcome(result: dict[str, Any]) -> str:
    """The sweep in a few words, for `ls`: who is best, or who leads after how many rounds."""
    if result["best"]:
        return f"best: {result['best']}"
    if result["indistinguishable"]:
        return f"indistinguishable: {', '.join(result['indistinguishable'])}"
    state = {"budget": "budget spent", "stopped": "stopped"}.get(result["outcome"], f"round {result['rounds']}")
    return f"{result['leader']} leads ({state})"


class SweepRecord:
    """Writes one sweep into its log (the process that holds the log) and reads an earlier one back."""

    def __init__(self, log: RunLog):
        self.log = log

    def start(self, argv: list[str], candidates: list[dict[str, Any]], path_note: str, budget: int) -> None:
        """What the sweep is: `argv` resumes it (`tui-eval sweep ARGV --log LOG`), `candidates` its checkpoints."""
        self.log.set_meta(kind=KIND, paths=[c["label"] for c in candidates],
                          sweep={"argv": argv, "checkpoints": candidates, "path": path_note, "budget": budget})

    def episode(self, name: str, round_no: int, record: EpisodeRecord) -> None:
        self.log.append(dataclasses.replace(record, path=name, block=round_no))

    def board(self, result: dict[str, Any]) -> None:
        """The board after a round (or at the end): what `attach` shows and `ls` sums up."""
        self.log.set_meta(sweep_result=result, verdict=short_outcome(result))

    def earlier(self) -> list[EpisodeRecord]:
        """Every episode an earlier process of this sweep finished, in log order."""
        return self.log.records()

