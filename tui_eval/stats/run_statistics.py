"""A run's statistics: every path, and the first two paths' difference, kept apart per explore setting.

A path's explore setting can change mid-run (the app's `x`, which also starts a new seed block).
Pooling sampled and greedy episodes under one label would report a mean that belongs to neither, so:
- `PathGroup` keeps one `PathStats` per explore setting of a path; its summary is that setting's when
  the path ran with one setting only (the common case), and per setting (`by_explore`) once it ran
  with two, with no pooled statistic;
- `RunStats` keeps one `Comparison` per pairing of the two paths' settings (explore of a, explore of
  b); a seed block has one pairing (a setting changes only on a new block), known once both paths
  reported an episode of that block: records wait for it (`held`).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from tui_eval.records import EpisodeRecord

from .compare import Comparison
from .comparison_summary import ComparisonSummary
from .declared import not_pooled
from .exact_proof import ExactProof
from .path import PathStats, ReturnBounds

__all__ = ["FLOOR", "PathGroup", "RunStats", "explore_label"]

#: `--equivalence-margin floor`: the margin is the noise floor's spread, once measured (`Comparison`)
FLOOR = "floor"

def explore_label(explore: bool | None) -> str:
    """``on`` / ``off`` / ``unknown``: the key of a setting in ``by_explore``."""
    return "unknown" if explore is None else ("on" if explore else "off")


class PathGroup:
    """One path's `PathStats`, one per explore setting, plus their pooled counts.

    Attributes other than `add` / `summary` (episodes, n, invalid, returns(), ...) are those of all
    the path's episodes: counts and histograms of the path, whatever its settings.
    """

    def __init__(self, make: Callable[[], PathStats]) -> None:
        self._make = make
        self.by_explore: dict[bool | None, PathStats] = {}
        self.latest: bool | None = None  # the setting of the newest record that had one
        self.all = make()  # the only setting's stats while there is one; a pooled copy after

    def add(self, record: EpisodeRecord) -> bool | None:
        """Account one episode; returns the setting it was counted under.

        A record without a setting (explore None: a log that did not store it) joins the path's
        latest known setting; the first known setting relabels records that had none."""
        explore = record.explore
        if explore is None:
            explore = self.latest
        elif self.latest is None and list(self.by_explore) == [None]:
            self.by_explore = {explore: self.by_explore[None]}
        if explore is not None:
            self.latest = explore
        stats = self.by_explore.get(explore)
        if stats is None:
            stats = self._new_setting(explore)
        stats.add(record)
        if stats is not self.all:
            self.all.add(record)
        return explore

    def _new_setting(self, explore: bool | None) -> PathStats:
        if not self.by_explore:
            self.by_explore[explore] = self.all
            return self.all
        if len(self.by_explore) == 1:  # a second setting: the pooled counts become their own copy
            self.all = copy.deepcopy(self.all)
        stats = self.by_explore[explore] = self._make()
        return stats

    def __getattr__(self, name: str) -> Any:
        if name in ("all", "by_explore", "_make", "latest"):
            raise AttributeError(name)
        return getattr(self.all, name)

    @property
    def mixed(self) -> bool:
        return len(self.by_explore) > 1

    def summary(self) -> dict[str, Any]:
        """The path's summary with ``explore``; a mixed path's statistics are only in ``by_explore``."""
        if not self.mixed:
            s = self.all.summary()
            s["explore"] = next(iter(self.by_explore), None)
            return s
        s = self.all.summary()
        for key in not_pooled():
            s[key] = None
        s["explore"] = None
        s["cs_method"] = "explore changed mid-run: statistics per setting in by_explore"
        s["by_explore"] = {}
        for explore, stats in self.by_explore.items():
            part = stats.summary()
            part["explore"] = explore
            s["by_explore"][explore_label(explore)] = part
        return s


class RunStats:
    """Running statistics of every path (per explore setting) and of the first two paths' difference.

    `comparison` is the comparison of the newest block's pairing of explore settings (what the live
    view shows); `comparisons` holds every pairing seen. `deterministic` applies to records without
    an explore setting; with settings, a pairing is deterministic when both are off. With
    `repeatable=False` (the env is not a function of its reset seed) no pairing is deterministic.
    """

    def __init__(self, names: list[str], deterministic: bool, return_bounds: ReturnBounds | None,
                 margin: float | str | None, repeatable: bool = True, proof: ExactProof | None = None) -> None:
        self.repeatable = repeatable
        self.proof = proof  # the run's exact proof (stats/exact_proof.py), shared by its comparisons
        self.names = list(names)
        self.return_bounds = return_bounds
        self.margin = margin
        self.deterministic = bool(deterministic) and repeatable
        self.policies_deterministic = bool(deterministic)  # explore off on both, whatever the env does
        self.paths = {n: PathGroup(lambda: PathStats(return_bounds=return_bounds)) for n in self.names}
        self.comparisons: dict[tuple, Comparison] = {}
        self._pair_names = tuple(self.names[:2]) if len(self.names) >= 2 else None
        self._placeholder = self._new_comparison(None) if self._pair_names else None
        self._block_explore: dict[int, dict[str, bool | None]] = {}
        self._held: dict[int, list[EpisodeRecord]] = {}
        self._current: tuple | None = None
        self._current_block = -1
        # (path, start, return, length) -> the first (seed, block) with that episode: another seed with the same
        # episode means the seeds were not independent (a simulator that ignores them)
        self._episodes_seen: dict[tuple, tuple[int, int]] = {}
        self.repeated = dict.fromkeys(self.names, 0)

    def _new_comparison(self, pairing: tuple | None) -> Comparison:
        assert self._pair_names is not None
        a, b = self._pair_names
        greedy = self.policies_deterministic if pairing is None or None in pairing else \
            (not pairing[0] and not pairing[1])
        det = greedy and self.repeatable
        from_floor = self.margin == FLOOR
        margin = None if isinstance(self.margin, str) else self.margin
        return Comparison(a, b, margin=margin, deterministic=det,
                          return_bounds=self.return_bounds, proof=self.proof, policies_deterministic=greedy,
                          margin_from_floor=from_floor)

    def add(self, rec: EpisodeRecord) -> None:
        explore = self.paths[rec.path].add(rec)
        if rec.start is not None and not rec.invalid:
            self._note_episode(rec)
        if self._pair_names is None or rec.path not in self._pair_names:
            return
        seen = self._block_explore.get(rec.block)
        if seen is None:
            seen = self._block_explore[rec.block] = {}
        if rec.path not in seen:
            seen[rec.path] = explore
            if len(seen) == 2:
                self._release(rec.block, seen)
        if len(seen) == 2:
            self._comparison_for(rec.block, seen).add(rec)
        else:
            self._held.setdefault(rec.block, []).append(rec)

    def _comparison_for(self, block: int, seen: dict) -> Comparison:
        assert self._pair_names is not None
        a, b = self._pair_names
        pairing = (seen[a], seen[b])
        cmp = self.comparisons.get(pairing)
        if cmp is None:
            cmp = self.comparisons[pairing] = self._new_comparison(pairing)
        if block >= self._current_block:
            self._current_block, self._current = block, pairing
        return cmp

    def _release(self, block: int, seen: dict) -> None:
        """The block's pairing just became known: its held records join their comparison."""
        cmp = self._comparison_for(block, seen)
        for rec in self._held.pop(block, ()):
            cmp.add(rec)

    def _note_episode(self, rec: EpisodeRecord) -> None:
        key = (rec.path, rec.start, rec.ret, rec.length)
        first = self._episodes_seen.setdefault(key, (rec.seed, rec.block))
        if first != (rec.seed, rec.block):
            self.repeated[rec.path] += 1

    @property
    def held(self) -> int:
        """Records of the compared paths waiting for the other path's first record in their block."""
        return sum(len(v) for v in self._held.values())

    @property
    def comparison(self) -> Comparison | None:
        """The comparison of the newest block's explore pairing (None with fewer than two paths)."""
        if self._current is None:
            return self._placeholder
        return self.comparisons[self._current]

    def comparison_summary(self) -> ComparisonSummary | None:
        """`comparison.summary()` with the pairing's explore settings and the held count."""
        cmp = self.comparison
        if cmp is None:
            return None
        summary = cmp.summary().with_pairing(self._current, self.held)
        repeated = sum(self.repeated.get(name, 0) for name in (cmp.a, cmp.b))
        return dataclasses.replace(summary, repeated=repeated) if repeated else summary

    def comparisons_by_explore(self) -> list[ComparisonSummary]:
        """Every pairing's summary (oldest first), each with its ``explore`` [a, b]."""
        return [cmp.summary().with_pairing(pairing) for pairing, cmp in self.comparisons.items()]
