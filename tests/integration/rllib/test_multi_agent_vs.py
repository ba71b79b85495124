"""`--vs BASELINE_CKPT` with multi-agent checkpoints: the candidate (the zoo's MultiAgentCartPole checkpoint)
against a baseline of the same setup trained from another seed (other weights), per module and for the
team, and the gate `--fail-if-worse` on the view (`--module ID`, else the team). Pairs whose returns do not
compare (multi-agent vs single-agent, other module IDs) are refused in one line."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.bad_input import assert_one_line_error, in_process
from tui_eval.integrations.rllib.paths.layout import MODULES_DIR
from tui_eval.log.store import RunLog

MODULES = ["p0", "p1"]


def _per_module(episodes: list[dict], path: str) -> dict[int, dict]:
    return {e["seed"]: e["modules"] for e in episodes if e["path"] == path}


def test_vs_compares_every_module_and_the_team_and_the_gate_reads_the_module_view(zoo, tmp_path, capsys):
    """32 seeds: the gate needs 30 pairs before its anytime interval exists."""
    result = in_process(capsys, zoo / "multi_agent", "--headless", "--vs", zoo / "multi_agent_baseline",
                        "--module", "p1",
                        "--fail-if-worse", "1000", "--episodes", "32", "--json", tmp_path / "s.json",
                        "--log", tmp_path / "run.sqlite")
    summary = json.loads((tmp_path / "s.json").read_text())
    episodes = summary["episodes"]
    # the module's returns are a few dozen on both checkpoints: nowhere near 1000 worse, and 32 pairs give
    # the interval (30 are needed), so the gate answers "not worse": exit 0
    assert result.returncode == 0, result.stderr[-3000:]
    baseline = _per_module(episodes, "vs")  # the baseline's `connectors` path
    assert len(baseline) == 32 and all(list(modules) == MODULES for modules in baseline.values())
    candidate = _per_module(episodes, "connectors")
    assert sorted(candidate) == sorted(baseline) and candidate != baseline  # other weights act otherwise
    for module in MODULES:
        compared = summary["modules"][module]["comparison"]
        assert (compared["a"], compared["b"], compared["paired"]) == ("connectors", "vs", 32)
        means = {p: summary["modules"][module]["paths"][p]["mean"] for p in ("connectors", "vs")}
        assert means["vs"] == pytest.approx(sum(m[module]["return"] for m in baseline.values()) / 32)
        assert f"{module}: verdict:" in result.stdout
    assert summary["team"]["comparison"]["a"] == "connectors" and "team: verdict:" in result.stdout
    # the gate's answer is module p1's comparison (the view), not the team's
    assert summary["module_view"] == "p1"
    assert summary["comparison"]["diff_cs95"] == summary["modules"]["p1"]["comparison"]["diff_cs95"]
    p1 = summary["modules"]["p1"]["comparison"]
    assert p1["a"] == "connectors" and p1["diff_cs95"][0] > -1000  # candidate - baseline: above -margin
    assert summary["decision"]["answer"] == "not worse"
    assert "gate: not worse after 32 pairs" in result.stdout


def _renamed_module(zoo, tmp_path):
    """A copy of the baseline whose module p1 is saved as p2 (another module ID, the same weights)."""
    other = tmp_path / "other_modules"
    shutil.copytree(zoo / "multi_agent_baseline", other)
    (other / MODULES_DIR / "p1").rename(other / MODULES_DIR / "p2")
    return other


@pytest.mark.parametrize("candidate, baseline, needles", [
    ("multi_agent", "ppo", ["is a single-agent checkpoint", "a multi-agent one", "do not pair"]),
    ("ppo", "multi_agent", ["is a multi-agent checkpoint", "a single-agent one", "do not pair"]),
    ("multi_agent", "renamed", ["has modules p0, p2", "has p0, p1", "the same module IDs"]),
])
def test_a_baseline_whose_returns_do_not_pair_is_refused_in_one_line(zoo, tmp_path, capsys, candidate, baseline,
                                                                      needles):
    other = _renamed_module(zoo, tmp_path) if baseline == "renamed" else zoo / baseline
    result = in_process(capsys, zoo / candidate, "--headless", "--episodes", "2", "--vs", other,
                        "--log", tmp_path / "run.sqlite")
    assert_one_line_error(result, *needles)
    assert not (tmp_path / "run.sqlite").exists() or RunLog(tmp_path / "run.sqlite", readonly=True).records() == []


def test_a_module_the_baseline_lacks_is_named_with_the_baseline(zoo, tmp_path, capsys):
    result = in_process(capsys, zoo / "multi_agent", "--headless", "--module", "p1", "--vs", zoo / "ppo",
                        "--log", tmp_path / "run.sqlite")
    assert_one_line_error(result, f"--vs {zoo / 'ppo'}: --module 'p1' is not in the checkpoint")
