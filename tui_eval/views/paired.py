"""Each seed's results on two paths side by side: what the app's paired view and `tui-eval report`'s scatter
draw. A seed is paired once both paths finished it in the same block; it is identical when its two results
are the same (`tui_eval.stats.compare.same_result`: validity, returns to float32, success)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tui_eval.records import EpisodeRecord
from tui_eval.stats.compare import same_result


@dataclass(frozen=True)
class PairedPoint:
    block: int
    seed: int
    a: float  # path A's return (NaN when its episode was invalid and gave none)
    b: float
    valid_a: bool
    valid_b: bool
    identical: bool

    @property
    def valid(self) -> bool:
        return self.valid_a and self.valid_b


class PairedSeeds:
    """Pairs two paths' records as they arrive (`add`), in the order each pair completes."""

    def __init__(self, a: str, b: str):
        self.a, self.b = a, b
        self.points: list[PairedPoint] = []
        self._waiting: dict[tuple[int, int, str], EpisodeRecord] = {}
        self._seen: set[tuple[int, int, str]] = set()

    def add(self, records: Iterable[EpisodeRecord]) -> list[PairedPoint]:
        """The pairs these records complete; a record seen before is skipped (a view that read the log, then
        gets the same records as they are streamed)."""
        new = []
        for rec in records:
            key = (rec.block, rec.seed, rec.path)
            if rec.path not in (self.a, self.b) or key in self._seen:
                continue
            self._seen.add(key)
            other = self.b if rec.path == self.a else self.a
            mate = self._waiting.pop((rec.block, rec.seed, other), None)
            if mate is None:
                self._waiting[(rec.block, rec.seed, rec.path)] = rec
                continue
            ra, rb = (rec, mate) if rec.path == self.a else (mate, rec)
            new.append(PairedPoint(rec.block, rec.seed, ra.ret, rb.ret, not ra.invalid, not rb.invalid,
                                   same_result(ra.ret, not ra.invalid, ra.success, rb.ret, not rb.invalid,
                                               rb.success)))
        self.points += new
        return new


def paired_points(records: Iterable[EpisodeRecord], a: str, b: str) -> list[PairedPoint]:
    seeds = PairedSeeds(a, b)
    seeds.add(records)
    return seeds.points
