"""The paired view (`s`): each seed's return on one path against the other's, drawn in the terminal, on logs of
real runs of the bundled rsl_rl demo (runner vs its TorchScript export): identical on every seed with both
deterministic, and differing with the runner sampling; at 80x24 and 120x40. It follows a live run, walks the
seeds largest difference first, and `enter` opens a seed's episodes as `enter` in the log does.

The runs are --in-process, and the two finished ones run in this process (the CLI's main): what is tested is the
view of their logs, not where their paths run (paths in processes of their own: tests/integration/engine/,
tests/integration/rsl_rl/); a process of its own would only add each run's start (torch's import, the demo's
export), most of its time."""

from __future__ import annotations

import math
import re

import pytest

from tests.support.common import cli, episodes_in, wait_until
from tests.support.ui import append, plain, synthetic_log, wait_for
from tui_eval.cli import main
from tui_eval.log.store import RunLog
from tui_eval.runtime import log_lock
from tui_eval.ui.app import EvalApp
from tui_eval.ui.paired_plot import SELECTED, scatter_lines
from tui_eval.ui.widgets import SeedDetail
from tui_eval.ui.widgets.paired_screen import PairedPlot, PairedScreen
from tui_eval.views.paired import paired_points

EPISODES = 60
IN_PROCESS = "--in-process"


@pytest.fixture(scope="module")
def demo_logs(tmp_path_factory) -> dict[str, object]:
    """Two finished runs of the rsl_rl demo: both paths deterministic (identical), the runner sampling (differ)."""
    folder = tmp_path_factory.mktemp("paired")
    logs = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for case, extra in (("identical", []), ("differ", ["--explore", "runner=on"])):
            log = folder / f"{case}.sqlite"
            argv = ["demo", "rsl_rl", "--headless", IN_PROCESS, "--episodes", str(EPISODES), "--log", str(log), *extra]
            assert main(argv) == 0
            logs[case] = log
    return logs


def _pairs(log):
    return paired_points(RunLog(log, readonly=True).records(), "runner", "jit")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("case", ["identical", "differ"])
async def test_the_paired_view_draws_every_paired_seed_and_walks_the_largest_difference_first(demo_logs, case, size):
    log = demo_logs[case]
    pairs = _pairs(log)
    assert len(pairs) == EPISODES
    app = EvalApp(log_path=log)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.source is not None and len(app.source.records()) == 2 * EPISODES,
                       what="the log read")
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, PairedScreen), what="the paired view")
        screen = app.screen
        title = plain(screen.query_one("#paired-title"))
        same = sum(p.identical for p in pairs)
        assert f"{EPISODES} seeds: {same} identical, {EPISODES - same} differ, 0 invalid" in title
        drawn = plain(screen.query_one(PairedPlot))
        lines = drawn.splitlines()
        assert len(lines) == screen.query_one(PairedPlot).size.height and SELECTED in drawn and "jit" in drawn
        assert all(len(line) <= size[0] for line in lines)
        if case == "identical":
            assert same == EPISODES and "identical" in plain(screen.query_one("#paired-seed"))
        else:
            gaps = [abs(p.a - p.b) for p in pairs if not p.identical]
            assert gaps and math.isclose(abs(screen.selected.a - screen.selected.b), max(gaps))
            first = screen.selected
            await pilot.press("right")
            assert abs(screen.selected.a - screen.selected.b) <= abs(first.a - first.b)
            await pilot.press("left")
            assert screen.selected == first
            assert f"seed {first.seed}" in plain(screen.query_one("#paired-seed"))
        chosen = screen.selected
        await pilot.press("enter")  # the seed's episodes on both paths, as enter in the log
        await wait_for(pilot, lambda: not isinstance(app.screen, PairedScreen), what="back to the run")
        detail = app.screen.query_one(SeedDetail)
        await wait_for(pilot, lambda: detail.records is not None and len(detail.records) == 2, what="the seed")
        assert detail.seed == chosen.seed and {r.path for r in detail.records} == {"runner", "jit"}
        assert {r.ret for r in detail.records if r.path == "runner"} == {chosen.a}
        await pilot.press("q")


async def test_the_paired_view_grows_with_a_live_run(tmp_path):
    log = tmp_path / "live.sqlite"
    proc = cli("demo", "rsl_rl", "--detach", IN_PROCESS, "--episodes", "100000", "--log", log, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    try:
        wait_until(lambda: episodes_in(log) >= 20, timeout=120)
        app = EvalApp(log_path=log)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.source is not None and app.source.records(), what="the log read")
            await pilot.press("s")
            await wait_for(pilot, lambda: isinstance(app.screen, PairedScreen), what="the paired view")
            screen = app.screen
            first = _seeds_in_title(screen)
            assert 0 < first <= len(screen.seeds.points)
            # the title, not only the points under it, follows the run
            await wait_for(pilot, lambda: _seeds_in_title(screen) > first + 20, what="more seeds in the title")
            assert _seeds_in_title(screen) <= len(screen.seeds.points)
            await pilot.press("escape")
            await pilot.press("q")
    finally:
        cli("stop", log)
        wait_until(lambda: log_lock.holder(log) is None, timeout=60)


def _seeds_in_title(screen) -> int:
    found = re.search(r"(\d+) seeds:", plain(screen.query_one("#paired-title")))
    assert found, plain(screen.query_one("#paired-title"))
    return int(found.group(1))


def test_invalid_episodes_are_marked_on_the_edge_of_their_side(tmp_path):
    """Layout only, on a synthetic log (real invalid episodes: tests/integration/engine/): a seed whose
    `connectors` episode was invalid is a red × on the bottom edge; the others are dots."""
    log = synthetic_log(tmp_path / "s.sqlite", n=40, invalid_every=7)
    append(log, range(2000, 2003))
    points = paired_points(log.records(), "evaluate", "connectors")
    invalid = [p for p in points if not p.valid]
    assert invalid and all(p.valid_a and not p.valid_b for p in invalid)
    lines = scatter_lines(points, 60, 16, "evaluate", "connectors")
    bottom = lines[13].plain  # the plot's last row: the lowest y, where an invalid y is drawn
    assert "×" in bottom and all("×" not in line.plain for line in lines[:13])
    assert any(0x2800 < ord(ch) <= 0x28FF for line in lines for ch in line.plain)


def test_ls_says_identical_where_the_app_does(demo_logs):
    listed = {line.split()[0]: line for line in cli("ls").stdout.splitlines()[2:] if line.strip()}
    assert f"IDENTICAL {EPISODES}/{EPISODES}" in listed["identical"]
    assert "IDENTICAL" not in listed["differ"] and "differ" in listed["differ"]
