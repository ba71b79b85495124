"""`d` in the live app: the doctor's findings on a modal screen, computed off the event loop."""

from __future__ import annotations

from tests.support.common import SUPPORT
from tests.support.ui import live_plan, plain, wait_for
from tui_eval.ui.app import EvalApp

LOOPS = SUPPORT / "doctor_loops.py"



async def test_d_shows_the_diagnosis_and_the_run_goes_on(tmp_path, apps):
    from tui_eval.ui.widgets.diagnosis_screen import DiagnosisScreen

    plan = live_plan(tmp_path, "--paths", "connectors,mine", "--path", f"mine={LOOPS}:greedy_policy")
    app = EvalApp(plan)
    apps.append(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.engine is not None and len(app.engine.log.records()) >= 4,
                       what="a few episodes")
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiagnosisScreen), what="the diagnosis screen")
        body = app.screen.query_one("#diagnosis-body")
        before = len(app.engine.log.records())
        await wait_for(pilot, lambda: "diagnosis of paths connectors, mine" in plain(body), timeout=90,
                       what="the findings")
        assert "no findings: the paths do not diverge" in plain(body)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, DiagnosisScreen), what="the screen closed")
        await wait_for(pilot, lambda: len(app.engine.log.records()) > before, what="the run going on")
