"""The Python facade (`tui_eval.api`) on real checkpoints: its summaries are the CLI's `--json`, a keyword is checked
as its flag is, the same-policy assertion passes on a faithful export and fails on a changed one, and the doctor and
the sweep answer as their commands do."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.common import cli
from tests.support.doctor_exports import faulty_export, without_normalizer
from tests.support.sweep_runs import BEST_RSL, rsl_run
from tui_eval import api
from tui_eval.demos import demo_checkpoint

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def demo() -> Path:
    return demo_checkpoint("rsl_rl")


def _episodes(summary: dict) -> list[tuple]:
    return sorted((e["path"], e["seed"], e["return"], e["length"]) for e in summary["episodes"])


def test_an_evaluation_is_the_clis_summary(demo, tmp_path):
    result = api.evaluate(demo, episodes=6, num_envs=3, seeds=range(5000, 5100), log=tmp_path / "api.sqlite")
    out = tmp_path / "cli.json"
    proc = cli(demo, "--headless", "--episodes", "6", "--num-envs", "3", "--seeds", "5000:5100",
               "--json", out, "--log", tmp_path / "cli.sqlite")
    assert proc.returncode == result.exit_code == 0, proc.stderr[-2000:]
    summary = json.loads(out.read_text())
    assert _episodes(result.to_json()) == _episodes(summary) and len(summary["episodes"]) == 12
    assert result.verdict == summary["comparison"]["verdict"] and result.same_policy is True
    assert result.comparison["identical_pairs"] == 6
    assert set(result.paths) == {"runner", "jit"} and result.paths["jit"].episodes == 6
    assert result.paths["jit"].mean == pytest.approx(summary["paths"]["jit"]["mean"])


def test_a_bad_keyword_value_is_the_clis_one_line_and_an_unknown_keyword_a_type_error(demo, tmp_path):
    with pytest.raises(api.BadInput, match=r"^--episodes must be positive, got -3$"):
        api.evaluate(demo, episodes=-3, log=tmp_path / "a.sqlite")
    with pytest.raises(api.BadInput, match="unknown path 'nonesuch'"):
        api.evaluate(demo, paths=["runner", "nonesuch"], episodes=2, log=tmp_path / "b.sqlite")
    with pytest.raises(TypeError, match=r"unknown run option 'num_worlds'.*num_envs"):
        api.evaluate(demo, num_worlds=4)
    with pytest.raises(TypeError, match="fail_on_differ is a switch"):
        api.evaluate(demo, fail_on_differ="yes")
    assert not (tmp_path / "a.sqlite").exists() and not (tmp_path / "b.sqlite").exists()  # no run log left


def test_a_sweep_names_the_best_checkpoint(demo, tmp_path):
    run = tmp_path / "run"
    rsl_run(run, demo.parent)
    result = api.sweep(run, round=4, episodes=160, num_envs=4, fail_if_not_best="model_39.pt",
                       log=tmp_path / "sweep.sqlite")
    assert result.best == BEST_RSL and len(result.checkpoints) == 4, result.summary
    assert result.exit_code == 3  # --fail-if-not-best: another checkpoint was shown better than model_39.pt


def test_the_docs_pytest_recipe_passes_a_faithful_export_fails_one_without_normalizer_and_the_doctor_names_it(
        demo, tmp_path):
    """The recipe in docs/api.md, executed as written, with the checkpoint swapped for the bundled demo's: the
    same-policy assertion passes on the faithful export and fails on one that lost its normalizer, which the
    doctor then names. (One run per case: each run's cost is its paths' start, not its episodes.)"""
    page = (DOCS / "api.md").read_text()
    recipe = re.search(r"```python\n(# test_export\.py.*?)```", page, re.S)
    assert recipe is not None, "docs/api.md lost its pytest recipe"
    namespace: dict = {}
    exec(compile(recipe.group(1), "docs/api.md", "exec"), namespace)
    namespace["CHECKPOINT"] = str(demo)
    (tmp_path / "faithful").mkdir()
    namespace["test_the_export_is_the_policy_we_trained"](tmp_path / "faithful")
    planted = faulty_export(demo.parent, tmp_path / "planted", without_normalizer)
    namespace["CHECKPOINT"] = str(planted)
    with pytest.raises(AssertionError, match="runner and jit are not the same policy"):
        namespace["test_the_export_is_the_policy_we_trained"](tmp_path / "planted")
    doctor = api.diagnose(planted, episodes=2, num_envs=2)
    assert doctor.causes and "normalizer" in doctor.causes[0]
    assert doctor.text.splitlines()[1] == f"1. {doctor.causes[0]}"  # the text the CLI prints
