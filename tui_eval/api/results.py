"""What the Python calls return: the `--json` summaries of the CLI (`to_json()` is that dict, key for key), with
typed attributes for what a caller asks first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PathResult:
    """One path's numbers (`summary["paths"][name]`)."""

    name: str
    episodes: int
    mean: float | None
    ci95: tuple[float, float] | None
    success_rate: float | None
    invalid: int

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> PathResult:
        ci = data.get("ci95")
        return cls(name=name, episodes=int(data.get("episodes") or 0), mean=data.get("mean"),
                   ci95=tuple(ci) if ci else None, success_rate=data.get("success_rate"),
                   invalid=int(data.get("invalid") or 0))


@dataclass(frozen=True)
class Evaluation:
    """A run's end: its exit code as the CLI gives it, and its summary (`tui-eval CHECKPOINT --json`)."""

    exit_code: int
    summary: dict[str, Any] = field(repr=False)

    @property
    def comparison(self) -> dict[str, Any]:
        """The first two paths compared (`summary["comparison"]`): verdict, paired seeds, agreement, noise floor."""
        return self.summary.get("comparison") or {}

    @property
    def verdict(self) -> str | None:
        """"differ", "equivalent" or "undecided" (the returns, statistically); None with fewer than two paths."""
        return self.comparison.get("verdict")

    @property
    def same_policy(self) -> bool | None:
        """Whether the paths are the same policy: they act alike on the same observations (the summary's
        `same_policy`, within the action tolerance), or every paired seed gave identical episodes. None where
        neither was shown (a stochastic path, or no seed paired yet)."""
        comparison = self.comparison
        if comparison.get("same_policy") is not None:
            return bool(comparison["same_policy"])
        if comparison.get("paired") and comparison.get("identical_pairs") == comparison.get("paired"):
            return True
        return None

    @property
    def exact(self) -> bool:
        """Identical episodes, or a difference beyond the tolerance that replays on each path alone."""
        return bool(self.comparison.get("exact"))

    @property
    def paths(self) -> dict[str, PathResult]:
        """Each path's numbers, by name."""
        return {name: PathResult.from_json(name, data) for name, data in (self.summary.get("paths") or {}).items()}

    @property
    def contract(self) -> dict[str, Any] | None:
        """The export's deployment contract checked against the env, where the export carries one."""
        return self.summary.get("contract")

    def to_json(self) -> dict[str, Any]:
        """The summary as the command's `--json` writes it."""
        return self.summary


@dataclass(frozen=True)
class Diagnosis:
    """The doctor's findings, best first (`tui-eval diagnose --json`), and its text as the CLI prints it."""

    report: dict[str, Any] = field(repr=False)
    text: str = field(repr=False)

    @property
    def findings(self) -> list[dict[str, Any]]:
        """Each finding: cause, evidence (with its proof), fix, paths, stage, seed, step."""
        return list(self.report.get("findings") or [])

    @property
    def causes(self) -> list[str]:
        """The findings' causes, best first."""
        return [f["cause"] for f in self.findings]

    def to_json(self) -> dict[str, Any]:
        """The report as `tui-eval diagnose --json` writes it."""
        return self.report


@dataclass(frozen=True)
class Sweep:
    """Which checkpoint is best on held-out seeds (`tui-eval sweep --json`)."""

    exit_code: int
    summary: dict[str, Any] = field(repr=False)

    @property
    def best(self) -> str | None:
        """The checkpoint shown best, or None while more than one may be."""
        return self.summary.get("best")

    @property
    def checkpoints(self) -> list[dict[str, Any]]:
        """Each checkpoint's numbers and the seed count at which it was eliminated."""
        return list(self.summary.get("checkpoints") or [])

    def to_json(self) -> dict[str, Any]:
        """The summary as the command's `--json` writes it."""
        return self.summary
