"""Frames of a multi-agent run: RLlib's MultiAgentCartPole (the zoo's checkpoint) renders its three agents'
CartPoles one above the other, on both paths, in the app's frame panel and in `tui-eval record`; a
MultiAgentEnv that cannot render says so as a single-agent env does."""

from __future__ import annotations

import re

from tests.support.bad_input import assert_one_line_error, in_process
from tests.support.ui import frame_panes, wait_for
from tui_eval.cli import build_parser, spec_from_args
from tui_eval.session import plan_run
from tui_eval.ui.app import EvalApp
from tui_eval.ui.frame_renderers import FrameOptions


async def test_the_frame_panel_shows_both_paths_of_a_multi_agent_run_on_one_seed(zoo, tmp_path, apps):  # noqa: F811
    argv = [str(zoo / "multi_agent"), "--log", str(tmp_path / "run.sqlite"), "--explore", "evaluate=off",
            "--num-envs", "2", "--episodes", "400",  # more than play before the panel asks for frames
            "--in-process"]  # the test looks at the connectors path's envs
    app = EvalApp(plan_run(spec_from_args(build_parser().parse_args(argv))), frames=FrameOptions(show=True, fps=10))
    apps.append(app)
    async with app.run_test(size=(120, 40)) as pilot:
        _, panes, labels = await frame_panes(pilot, app)
        assert labels[0].startswith("evaluate  seed ") and labels[1].startswith("connectors  seed ")
        assert len({label.split("seed ")[1].split()[0] for label in labels}) == 1  # the same seed
        for pane in panes:
            height, width = pane.image.image.shape[:2]
            assert height > 1.5 * width  # three CartPoles (3:2 each) one above the other
        guards = [sub.unwrapped for sub in app.engine.paths["connectors"].env.envs]
        app.engine.stop()  # the frames are shown: no need to play the rest
        await wait_for(pilot, lambda: app.engine.state == "done", timeout=90, what="the run's end")
        # rgb_array is set for each render call alone, on the agents' CartPoles too, then put back
        assert {g.render_mode for g in guards} | {e.unwrapped.render_mode for g in guards for e in g.env.envs} == \
            {None}
        await pilot.press("escape")
        await pilot.press("q")


def test_record_plays_one_seed_of_every_agent_on_both_paths(zoo, tmp_path, capsys):  # noqa: F811
    import imageio.v3 as iio

    out = tmp_path / "clip.gif"
    done = in_process(capsys, "record", zoo / "multi_agent", "--seed", "3", "--explore", "evaluate=off",
                      "--out", out)
    assert done.returncode == 0, done.stderr[-2000:]
    ends = re.findall(r"(evaluate|connectors) (\d+) steps, return ([\d.]+)", done.stdout)
    assert [e[0] for e in ends] == ["evaluate", "connectors"] and ends[0][1:] == ends[1][1:]  # explore off
    frames = iio.imread(out, index=None)
    assert frames.shape[0] == int(ends[0][1]) + 1  # the reset, then one frame per env step
    assert frames.shape[1] > frames.shape[2] / 2  # two columns of three stacked CartPoles, under labels
    assert not (frames[1] == frames[-1]).all()  # the poles move


def test_record_of_a_multi_agent_env_that_cannot_render_is_one_line(zoo, tmp_path, capsys):  # noqa: F811
    from tests.support import multi_agent_fault_envs as envs

    done = in_process(capsys, "record", zoo / "multi_agent", "--env", envs.BLIND, "--env-config",
                      '{"num_agents": 3}', "--paths", "connectors", "--seed", "1", "--out", tmp_path / "x.gif")
    assert_one_line_error(done, "path connectors: this env cannot show frames", "render_modes: none")
    assert not list(tmp_path.glob("x.*"))
