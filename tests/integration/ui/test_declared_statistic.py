"""A statistic declared once (tui_eval/stats/declared.py) appears in every view: a path's summary and `--json`, the
headless table and the app's table. Here the median return, added by the test alone, on the toy kind of the
tests (tests/support/toy_kind) in a real run."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from tests.support.engines import plan_for
from tests.support.toy_kind import save
from tests.support.ui import plain, wait_for
from tui_eval.cli import main
from tui_eval.runtime.app_process import finish_live
from tui_eval.stats.declared import Cell, Statistic, declare, withdraw
from tui_eval.ui.app import EvalApp
from tui_eval.ui.widgets import ComparisonTable

MEDIAN = Statistic("median", lambda s, b: float(np.median(s.returns())) if b.n else None,
                   table=Cell("median", digits=2), app=Cell("median", drop=1.5), per_module=True)
WOBBLY = [[0, 0, -1, -0.5], [0, 0, 1, 0.2]]  # a policy whose episodes end at various lengths


@pytest.fixture
def toy_with_median(tmp_path, monkeypatch):
    monkeypatch.setenv("TUI_EVAL_KINDS", "tests.support.toy_kind:PLUGIN")
    checkpoint = tmp_path / "cart.toy.json"
    save(checkpoint, "CartPole-v1", WOBBLY)
    declare(MEDIAN)
    yield checkpoint
    withdraw("median")


def test_a_declared_statistic_is_in_json_and_the_headless_table(toy_with_median, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main([str(toy_with_median), "--headless", "--episodes", "8", "--json", str(out),
                 "--log", str(tmp_path / "run.sqlite")]) == 0
    paths = json.loads(out.read_text())["paths"]
    assert all(isinstance(p["median"], float) for p in paths.values())
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("path "))
    assert header.split().index("median") > header.split().index("mean")


async def test_a_declared_statistic_is_a_column_of_the_app(toy_with_median, tmp_path, apps):
    plan = plan_for(toy_with_median, "--episodes", "8", log=tmp_path / "run.sqlite")
    app = EvalApp(plan)
    apps.append(app)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: all(app.summaries.get(n, {}).get("episodes") == 8 for n in plan.paths),
                       timeout=60, what="both paths done")
        await pilot.pause(0.3)
        table = plain(app.query_one(ComparisonTable))
        assert "median" in table.splitlines()[0]
        await pilot.press("q")
    assert finish_live(app, app.return_value, out=io.StringIO(), err=io.StringIO()) == 0
