"""The live app on an rl-zoo3 run folder (Pilot, the real engine): the header, table and verdict show both SB3 paths,
and the frame panel shows `predict` and `onnx` side by side on one seed, each a picture of the env."""

from __future__ import annotations

import shutil

from tests.support.sb3_runs import ZOO_ENV, export_onnx
from tests.support.ui import frame_panes, plain, wait_for
from tui_eval.cli import build_parser, spec_from_args
from tui_eval.session import plan_run
from tui_eval.ui.app import EvalApp
from tui_eval.ui.frame_renderers import FrameOptions
from tui_eval.ui.frames_screen import FramesScreen
from tui_eval.ui.widgets import ComparisonTable, RunHeader, VerdictBar


async def test_a_zoo_run_in_the_app_shows_both_paths_and_their_frames(sac_run, tmp_path, apps):
    run = tmp_path / "logs" / "sac" / sac_run.name
    shutil.copytree(sac_run, run)
    export_onnx(run / f"{ZOO_ENV}.zip", run / f"{ZOO_ENV}.onnx", vecnormalize=run / ZOO_ENV / "vecnormalize.pkl",
                unscale=True)
    # enough episodes that the run is still playing when the frame panel asks for its first frames
    argv = [str(run), "--log", str(tmp_path / "run.sqlite"), "--episodes", "24", "--num-envs", "2"]
    app = EvalApp(plan_run(spec_from_args(build_parser().parse_args(argv))), frames=FrameOptions(show=True, fps=10))
    apps.append(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen, panes, labels = await frame_panes(pilot, app)
        assert labels[0].startswith("predict  seed ") and labels[1].startswith("onnx  seed "), labels
        assert len({label.split("seed ")[1].split()[0] for label in labels}) == 1  # the same seed side by side
        assert all(p.image.image is not None and p.image.image.ndim == 3 for p in panes)  # Pendulum's picture
        await pilot.press("escape")
        assert not isinstance(app.screen, FramesScreen)
        await wait_for(pilot, lambda: app.engine is not None and app.engine.state == "done", timeout=120,
                       what="both paths done")
        await wait_for(pilot, lambda: all(app.summaries.get(n, {}).get("episodes") == 24 for n in ("predict", "onnx")),
                       what="final statistics")
        assert "predict" in plain(app.query_one(ComparisonTable)) and "onnx" in plain(app.query_one(ComparisonTable))
        verdict = plain(app.query_one(VerdictBar))
        assert "IDENTICAL" in verdict or "SAME POLICY" in verdict, verdict
        assert "DONE" in plain(app.query_one(RunHeader))
        await pilot.press("q")
