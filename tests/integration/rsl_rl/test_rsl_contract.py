"""An rsl_rl export without metadata (`exported/policy.pt` next to the checkpoint, as Isaac Lab's play script writes
it) still says its sizes and whether the checkpoint's observation normalizer is inside it: an export that lost the
normalizer, or carries other statistics, reads as such in the contract and is the doctor's first finding."""

from __future__ import annotations

import json

import pytest

from tests.support.common import ROOT, cli
from tests.support.doctor_exports import faulty_export, other_statistics, without_normalizer
from tui_eval.config.spec import RunSpec
from tui_eval.doctor.contract import contract_findings
from tui_eval.kinds import load_kind

DEMO = ROOT / "assets" / "rsl_pointgoal"


def contract_of(checkpoint) -> dict:
    return load_kind(RunSpec(checkpoint=str(checkpoint))).deploy_contract().to_json()


def test_the_demos_export_holds_the_checkpoints_normalizer_and_sizes():
    contract = contract_of(DEMO / "model_39.pt")
    assert contract["source"].startswith("exported/policy.pt (no metadata")
    assert [(i["name"], i["export"], i["env"], i["ok"]) for i in contract["items"]] == [
        ("observation size", 4, 4, True), ("action size", 2, 2, True),
        ("normalizer", "the checkpoint's mean and std", "obs_normalizer", True)]


@pytest.mark.parametrize("change, export, says", [
    (without_normalizer, "none found", "it lost the normalizer"),
    (other_statistics, "other statistics (obs_normalizer._mean, obs_normalizer._var)", "statistics other than"),
])
def test_an_export_without_the_checkpoints_normalizer_reads_as_such(tmp_path, change, export, says):
    checkpoint = faulty_export(DEMO, tmp_path / "run", change)
    contract = contract_of(checkpoint)
    item = contract["items"][2]
    assert item["name"] == "normalizer" and not item["ok"] and item["export"] == export and says in item["note"]
    assert contract_findings(contract, ["runner", "jit"])[0].cause.startswith(
        "the export's deployment contract states the normalizer otherwise")


@pytest.fixture(scope="module")
def lost_normalizer_run(tmp_path_factory):
    """One headless run of an export that lost its normalizer: its output, summary and log, for the table's test
    and the app's (which reads the log back)."""
    folder = tmp_path_factory.mktemp("lost_normalizer")
    checkpoint = faulty_export(DEMO, folder / "run", without_normalizer)
    out, log = folder / "summary.json", folder / "run.sqlite"
    proc = cli(checkpoint, "--headless", "--episodes", "4", "--json", out, "--log", log)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads(out.read_text()), log


def test_the_headless_table_shows_the_contract_of_an_export_that_lost_its_normalizer(lost_normalizer_run):
    proc, summary, _ = lost_normalizer_run
    assert "  ✗ normalizer: the checkpoint normalizes observations and the export holds no such statistics" \
        in proc.stdout
    assert summary["contract"]["items"][2]["ok"] is False


async def test_the_apps_contract_view_marks_each_item(lost_normalizer_run):
    from rich.console import Console

    from tests.support.ui import wait_for
    from tui_eval.ui.app import EvalApp
    from tui_eval.ui.widgets.contract_screen import ContractScreen

    app = EvalApp(log_path=lost_normalizer_run[2])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.summaries.get("jit", {}).get("episodes") == 4, what="the log read")
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, ContractScreen), what="the contract view")
        console = Console(width=118, record=True, color_system=None)
        console.print(app.screen.query_one("#contract-table").content)
        text = console.export_text()
        assert "deployment contract: 2 ✓, 1 ✗ (first: normalizer" in text
        assert "✓ │ observation size" in text and "✗ │ normalizer" in text and "none found" in text
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ContractScreen), what="closed")
        await pilot.press("q")
