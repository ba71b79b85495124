"""Answer as soon as the data allow: `--until-decided` and the CI gate `--vs B --fail-if-worse D`.

The comparison's intervals are anytime-valid (confidence sequences), so a run may stop at the first
look where they decide (optional stopping) without losing their guarantee:
- `--until-decided`: stop once the verdict is ``differ`` or ``equivalent``; `--episodes` is the budget.
- The gate, a non-inferiority test of the candidate against the baseline checkpoint of `--vs`: with
  Δ = mean(candidate) - mean(baseline) and its anytime interval [lo, hi] (the comparison's, at its
  Bonferroni share of alpha), ``not worse`` once lo > -D, ``worse`` once hi < -D, else
  ``undecided``; the same on the success rate with P percentage points. "Not worse" needs every
  gated metric not worse, "worse" one metric worse. Error rates: a candidate worse by exactly D is
  called "not worse" with probability <= the interval's alpha, an equal one "worse" with the same
  bound (the interval must miss the true Δ for either); `tests/unit/test_decide.py` measures both.
Exit codes (docs/contract.md): 0 not worse, 3 worse, 5 undecided at the budget.

The watcher (`DecisionWatch`) checks the comparison after new episodes (at most every
`CHECK_EVERY_S`), and on an answer notes it in the run's log (``decision``) and ends the run early:
episodes in flight finish and are kept; the summary's ``decision`` says how many pairs it took.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.engine.void import VOID, void_reason
from tui_eval.errors import EXIT_DIFFER, EXIT_OK, EXIT_UNDECIDED, BadInput
from tui_eval.log.lifecycle import RunMeta

__all__ = ["EXIT_NOT_WORSE", "EXIT_WORSE", "EXIT_UNDECIDED", "decision_options", "gate_answer", "answer",
           "decision_summary", "gate_exit_code", "check_gate_paths", "DecisionWatch",
           "watch_decision"]

EXIT_NOT_WORSE, EXIT_WORSE = EXIT_OK, EXIT_DIFFER  # the gate's answers as exit codes (docs/contract.md)
CHECK_EVERY_S = 0.02  # the watcher's fastest pace (a check takes well under a millisecond)
VS_MARK = "vs"  # the baseline's paths: `vs` and `P@vs` (tui_eval.kinds.extra)


def decision_options(args: Any) -> dict[str, Any]:
    """The RunSpec fields of `--until-decided` / `--fail-if-worse` / `--fail-if-worse-success`,
    checked (BadInput: one line, exit 2)."""
    worse, worse_success = args.fail_if_worse, args.fail_if_worse_success
    for flag, value in (("--fail-if-worse", worse), ("--fail-if-worse-success", worse_success)):
        if value is None:
            continue
        if not args.vs:
            raise BadInput(f"{flag} gates a candidate against a baseline: give the baseline with --vs BASELINE_CKPT")
        if not value >= 0.0 or value == float("inf"):
            raise BadInput(f"{flag} needs a margin >= 0 (how much worse is allowed), got {value}")
    if worse_success is not None and worse_success > 100.0:
        raise BadInput(f"--fail-if-worse-success is in percentage points (0..100), got {worse_success}")
    return {"until_decided": bool(args.until_decided), "fail_if_worse": worse, "fail_if_worse_success": worse_success}


def _is_baseline(path: str) -> bool:
    return path == VS_MARK or path.endswith("@" + VS_MARK)


def check_gate_paths(spec: RunSpec, paths: list[str]) -> None:
    """The gate compares the first two paths: one must be the baseline's (`vs` / `P@vs`), one not."""
    if spec.fail_if_worse is None and spec.fail_if_worse_success is None:
        return
    pair = paths[:2]
    if len(pair) < 2 or sum(_is_baseline(p) for p in pair) != 1:
        raise BadInput(f"--fail-if-worse compares the first two paths, one of the candidate and one of --vs; "
                       f"got {', '.join(pair) or 'none'}: e.g. --paths connectors,vs (or leave --paths out)")


def _oriented(interval, baseline_first: bool):
    """The interval of candidate - baseline from one of a - b."""
    if interval is None:
        return None
    lo, hi = float(interval[0]), float(interval[1])
    return (-hi, -lo) if baseline_first else (lo, hi)


def _metric_answer(interval, margin: float) -> str:
    if interval is None:
        return "undecided"
    if interval[0] > -margin:
        return "not worse"
    if interval[1] < -margin:
        return "worse"
    return "undecided"


def gate_answer(comparison: dict[str, Any], worse_by: float | None, worse_success_pp: float | None) -> str:
    """``not worse`` / ``worse`` / ``undecided`` from a comparison's JSON (`ComparisonSummary.to_json`)."""
    baseline_first = _is_baseline(str(comparison.get("a")))
    answers = []
    if worse_by is not None:
        answers.append(_metric_answer(_oriented(comparison.get("diff_cs95"), baseline_first), worse_by))
    if worse_success_pp is not None:
        answers.append(_metric_answer(_oriented(comparison.get("success_diff_cs95"), baseline_first),
                                      worse_success_pp / 100.0))
    if "worse" in answers:
        return "worse"
    if answers and all(a == "not worse" for a in answers):
        return "not worse"
    return "undecided"


def _gated(spec: dict[str, Any]) -> bool:
    return spec.get("fail_if_worse") is not None or spec.get("fail_if_worse_success") is not None


def answer(spec: dict[str, Any], comparison: dict[str, Any] | None) -> str | None:
    """The answer the run waits for, or None while there is none: the gate's (``not worse`` /
    ``worse``) when gated, else the verdict when ``differ`` or ``equivalent``."""
    if comparison is None:
        return None
    if _gated(spec):
        result = gate_answer(comparison, spec.get("fail_if_worse"), spec.get("fail_if_worse_success"))
        return None if result == "undecided" else result
    verdict = comparison.get("verdict")
    return verdict if verdict in ("differ", "equivalent") else None


def decision_summary(meta: dict[str, Any], comparison: dict[str, Any] | None) -> dict[str, Any] | None:
    """The summary's ``decision`` (None unless `--until-decided` or a gate was asked for): the answer,
    the pairs it took and whether the run stopped early for it; at the budget, the final answer."""
    spec = meta.get("spec") or {}
    if not (spec.get("until_decided") or _gated(spec)):
        return None
    if comparison is not None and comparison.get("verdict") == VOID:  # a path given up decides nothing
        return {"rule": "gate" if _gated(spec) else "verdict", "answer": VOID, "pairs": comparison.get("paired"),
                "stopped_early": False, "budget": spec.get("episodes"), "fail_if_worse": spec.get("fail_if_worse"),
                "fail_if_worse_success": spec.get("fail_if_worse_success")}
    noted = meta.get("decision")
    if noted:
        return dict(noted)
    found = answer(spec, comparison)
    return {"rule": "gate" if _gated(spec) else "verdict", "answer": found or "undecided",
            "pairs": None if comparison is None else comparison.get("paired"), "stopped_early": False,
            "budget": spec.get("episodes"), "fail_if_worse": spec.get("fail_if_worse"),
            "fail_if_worse_success": spec.get("fail_if_worse_success")}


def gate_exit_code(summary: dict[str, Any]) -> int | None:
    """0 not worse, 3 worse, 5 undecided at the budget; None without a gate."""
    decision = summary.get("decision")
    if not decision or decision.get("rule") != "gate":
        return None
    return {"not worse": EXIT_NOT_WORSE, "worse": EXIT_WORSE}.get(decision.get("answer"), EXIT_UNDECIDED)


class DecisionWatch:
    """Checks the engine's comparison after new episodes; on an answer, notes it and ends the run early.

    `engine` needs `subscribe`, `comparison_now`, `end_early`, `state` and `log.set_meta` (duck-typed:
    this module stays below the engine)."""

    def __init__(self, engine: Any, spec: RunSpec) -> None:
        self.engine = engine
        self.spec = spec.to_json()
        self.decided: dict[str, Any] | None = None
        self._new = threading.Event()
        engine.subscribe(lambda event: self._new.set())
        self._thread = threading.Thread(target=self._loop, name="decision-watch", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while self.decided is None and self.engine.state != "done":
            if not self._new.wait(0.5):
                continue
            self._new.clear()
            self.check()
            time.sleep(CHECK_EVERY_S)

    def check(self) -> dict[str, Any] | None:
        """One look at the comparison; the decision when there is one (noted once)."""
        if void_reason(self.engine.errors):  # a path was given up: its episodes decide nothing
            return self.decided
        summary = self.engine.comparison_now()
        comparison = None if summary is None else summary.to_json()
        found = answer(self.spec, comparison)
        if found is None or self.decided is not None or comparison is None:
            return self.decided
        self.decided = {
            "rule": "gate" if _gated(self.spec) else "verdict", "answer": found, "pairs": comparison["paired"],
            "verdict": comparison["verdict"], "stopped_early": True, "budget": self.spec.get("episodes"),
            "fail_if_worse": self.spec.get("fail_if_worse"),
            "fail_if_worse_success": self.spec.get("fail_if_worse_success"),
        }
        RunMeta(decision=self.decided).write(self.engine.log)
        self.engine.end_early()
        return self.decided


def watch_decision(engine: Any, spec: RunSpec) -> DecisionWatch | None:
    """With `--until-decided`, a `DecisionWatch` on `engine`; the gate's paths are checked first."""
    check_gate_paths(spec, list(engine.paths))
    return DecisionWatch(engine, spec) if spec.until_decided else None
