"""Rendered frames: the cell renderer, the frame hub on a real engine, the wire format, `tui-eval record`."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest

from tests.support.cli_jobs import RECORD_GIF, RECORD_WITHOUT_FRAMES, result_of
from tests.support.common import ASSETS, CARTPOLE, cli, wait_until
from tui_eval.frames.cells import EIGHT_BIT, TRUECOLOR, halfblock_lines, xterm256
from tui_eval.frames.hub import KEEP_FRAMES
from tui_eval.frames.images import is_image_space
from tui_eval.frames.wire import view_from_json, view_to_json

LUNAR = ASSETS / "ppo_lunarlander"

RED, GREEN, BLUE = (255, 0, 0), (0, 255, 0), (0, 0, 255)
WHITE, BLACK, GREY = (255, 255, 255), (0, 0, 0), (128, 128, 128)


def _cells(lines):
    """Each cell as (character, upper colour, lower colour), run-length merged segments expanded."""
    out = []
    for line in lines:
        row = []
        for seg in line:
            upper, lower = seg.style.color, seg.style.bgcolor
            for ch in seg.text:
                row.append((ch, upper, lower))
        out.append(row)
    return out


def test_cell_renderer_turns_a_known_array_into_upper_half_blocks_in_truecolor_and_256_colours():
    image = np.array([[RED, GREEN, GREEN],
                      [BLUE, BLUE, BLUE],
                      [WHITE, BLACK, BLACK],
                      [GREY, GREY, GREY]], dtype=np.uint8)  # 3 wide, 4 tall: 3 columns, 2 rows of cells
    cells = _cells(halfblock_lines(image, 3, 2, TRUECOLOR))
    assert [[c[0] for c in row] for row in cells] == [["▀"] * 3, ["▀"] * 3]
    triplets = [[(c[1].triplet, c[2].triplet) for c in row] for row in cells]
    assert triplets == [[(RED, BLUE), (GREEN, BLUE), (GREEN, BLUE)], [(WHITE, GREY), (BLACK, GREY), (BLACK, GREY)]]
    first_row = halfblock_lines(image, 3, 2, TRUECOLOR)[0]
    assert [seg.text for seg in first_row] == ["▀", "▀▀"]  # equal neighbours share one segment

    cells = _cells(halfblock_lines(image, 3, 2, EIGHT_BIT))
    codes = [[(c[1].number, c[2].number) for c in row] for row in cells]
    # xterm's cube: red 196, green 46, blue 21, white 231, black 16; grey 128 is on the grey ramp (244)
    assert codes == [[(196, 21), (46, 21), (46, 21)], [(231, 244), (16, 244), (16, 244)]]


def test_cell_renderer_keeps_the_aspect_ratio_when_scaling_into_a_panel():
    image = np.zeros((400, 600, 3), np.uint8)  # LunarLander's 3:2
    lines = halfblock_lines(image, 60, 40)
    widths = {sum(len(s.text) for s in line) for line in lines}
    assert widths == {60} and len(lines) == 20  # 60 x 40 pixels (two per cell) = 3:2
    tall = halfblock_lines(np.zeros((100, 50, 3), np.uint8), 80, 10)
    assert len(tall) == 10 and {sum(len(s.text) for s in line) for line in tall} == {10}


def test_xterm256_picks_greys_for_greys_and_the_cube_for_colours():
    assert xterm256(np.array([[8, 8, 8], [238, 238, 238], [95, 135, 175]])).tolist() == [232, 255, 67]


def test_image_observations_are_recognised_as_frames():
    import gymnasium as gym

    assert is_image_space(gym.make("CarRacing-v3").observation_space)
    assert not is_image_space(gym.make("LunarLander-v3").observation_space)


def _engine(tmp_path, *args, own_processes: bool = False):
    """Paths as threads of this process (their envs are inspected), or each in a process of its own."""
    from tui_eval.cli import build_parser, spec_from_args
    from tui_eval.session import plan_run, start_engine

    argv = [str(CARTPOLE), "--vs", str(CARTPOLE), "--paths", "connectors,vs", "--log", str(tmp_path / "r.sqlite"),
            *(() if own_processes else ("--in-process",)), *args]
    return start_engine(plan_run(spec_from_args(build_parser().parse_args(argv))))


def test_the_hub_renders_one_env_per_path_and_shows_a_seed_both_paths_played(tmp_path):
    engine = _engine(tmp_path, "--num-envs", "3", "--episodes", "6")
    envs = {name: path.env.unwrapped.envs for name, path in engine.paths.items()}  # the vector envs' sub-envs
    rendering: list[int] = []
    done = threading.Event()

    def watch():  # how many envs of one path are shown (and may render) at once, sampled while the run goes
        while not done.wait(0.002):  # a pause between looks: a busy loop would take the paths' core
            rendering.extend(sum(e.shown is not None for e in subs) for subs in envs.values())

    engine.frames.always = True
    engine.start()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        assert engine.wait(120)
    finally:
        done.set()
        watcher.join()
        engine.close()
    assert max(rendering) == 1 and 1 in rendering  # one env per path at most, never all
    # the render mode is set for each render call alone, then put back
    assert {e.unwrapped.render_mode for subs in envs.values() for e in subs} == {None}
    view = engine.frames.view(["connectors", "vs"], history=True)
    assert view.key is not None and view.key in view.keys
    assert [p.key for p in view.panes] == [view.key, view.key]
    for pane in view.panes:
        steps = [f.step for f in pane.frames]
        assert steps and steps == sorted(steps) and pane.done
        # the reset frame is kept, unless the episode gave more frames than are kept (then the newest are)
        assert steps[0] == 0 or len(steps) == KEEP_FRAMES
        assert pane.frames[-1].step == pane.step  # the last frame is the episode's end
        assert all(f.image.dtype == np.uint8 and f.image.shape[2] == 3 and max(f.image.shape) <= 256
                   for f in pane.frames)
    # off the hot path: without a viewer, nothing renders
    idle = _engine(tmp_path / "idle", "--num-envs", "2", "--episodes", "2")
    idle.start()
    assert idle.wait(60)
    idle.close()
    assert idle.frames.view(["connectors", "vs"]).key is None


def test_frames_of_a_path_in_its_own_process_reach_the_runs_hub_for_the_seed_both_paths_played(tmp_path):
    """`vs` runs in a process of its own: its frames come back over its pipe and show side by side with the
    frames of `connectors` (in the run's process), on the same seed."""
    engine = _engine(tmp_path, "--num-envs", "3", "--episodes", "6", own_processes=True)
    assert "in a process of its own" in engine.paths["vs"].description
    engine.frames.always = True
    engine.start()
    try:
        assert engine.wait(120)
        # the last frames of `vs` come over its pipe after its episode's record: wait for both panes to end
        view = wait_until(lambda: (v := engine.frames.view(["connectors", "vs"], history=True)).keys
                          and all(p.done for p in v.panes) and v, timeout=10)
    finally:
        engine.close()
    assert [p.key for p in view.panes] == [view.key, view.key]
    for pane in view.panes:
        steps = [f.step for f in pane.frames]
        assert steps and steps == sorted(steps) and pane.frames[-1].step <= pane.step
        assert all(f.image.dtype == np.uint8 and f.image.shape[2] == 3 for f in pane.frames)
    vs, connectors = view.panes[1], view.panes[0]
    assert vs.done and vs.step == connectors.step and vs.ret == connectors.ret  # one policy, one seed


def test_the_wire_keeps_a_view_intact():
    from tui_eval.frames.hub import Frame, FrameView, Pane

    image = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    view = FrameView((0, 7), ((0, 7),), (Pane("a", (0, 7), 4, -1.5, True, (Frame(4, -1.5, image),)),
                                        Pane("b", None, problem="cannot render")))
    back = view_from_json(view_to_json(view))
    assert back.key == (0, 7) and back.keys == ((0, 7),)
    assert back.panes[0].frames[0].step == 4 and np.array_equal(back.panes[0].frames[0].image, image)
    assert back.panes[1].problem == "cannot render" and back.panes[1].frames == ()


def test_record_writes_a_gif_with_one_frame_per_step_for_both_paths(prefetcher, tmp_path):
    import imageio.v3 as iio

    # record the demo --seed 5 --out clip.gif --paths connectors,vs --vs the demo --stride 1 (a background job)
    done, folder = result_of(prefetcher, RECORD_GIF, tmp_path / "run")
    out = folder / "clip.gif"
    assert done.returncode == 0, done.stderr
    steps = [int(n) for n in re.findall(r"(\d+) steps", done.stdout)]
    assert len(steps) == 2
    frames = iio.imread(out, index=None)
    assert frames.shape[0] == max(steps) + 1  # the reset, then one frame per step
    assert frames.shape[2] > 2 * frames.shape[1]  # two CartPole frames (3:2) side by side, under labels



def test_a_stride_keeps_every_nth_step_and_the_episode_end():
    from tui_eval.frames.clip import strided
    from tui_eval.frames.hub import Frame

    frames = [Frame(step, 0.0, np.zeros((2, 2, 3), np.uint8)) for step in range(24)]  # reset + 23 steps
    assert [f.step for f in strided(frames, 10)] == [0, 10, 20, 23]
    assert len(strided(frames, 1)) == 24


@pytest.mark.parametrize("args, says", [
    ((CARTPOLE, "--seed", "1", "--out", "{tmp}/x.avi"), "write a .gif or an .mp4"),
    ((CARTPOLE, "--seed", "1", "--out", "{tmp}/x.gif", "--episodes", "3"), "does not take --episodes"),
    ((CARTPOLE, "--out", "{tmp}/x.gif"), "--seed"),
])
def test_record_bad_input_is_one_line_and_exit_2(tmp_path, args, says):
    _assert_record_refused(cli("record", *(str(a).replace("{tmp}", str(tmp_path)) for a in args)), says, tmp_path)


def test_record_of_an_env_without_frames_is_one_line_and_exit_2(prefetcher, tmp_path):
    # record the rsl_rl PointGoal demo --seed 1 (a background job)
    done, folder = result_of(prefetcher, RECORD_WITHOUT_FRAMES, tmp_path / "run")
    _assert_record_refused(done, "cannot show frames", folder)


def _assert_record_refused(done, says: str, folder) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert says in lines[-1] and "Traceback" not in done.stderr
    assert all(line.startswith("recording") for line in lines[:-1])
    assert not list(folder.glob("x.*"))


def test_headless_frames_is_bad_input():
    done = cli(CARTPOLE, "--headless", "--frames")
    assert done.returncode == 2 and "drop --headless" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_attached_viewer_gets_small_frames_over_the_control_channel(tmp_path):
    from tui_eval.runtime.control import ControlClient, ControlServer

    engine = _engine(tmp_path, "--num-envs", "2", "--episodes", "8")  # room for a loaded machine's first ask
    server = ControlServer(engine, engine.log.path)
    try:
        engine.start()
        client = ControlClient(engine.log.path)

        def framed():
            reply = client.send("frames", paths=["connectors", "vs"], size=[48, 32])
            view = view_from_json(reply["view"])
            return view if all(p.frames for p in view.panes) else None

        view = wait_until(framed, timeout=60, interval=0.1)  # asking is what turns the rendering on
        assert engine.frames.active and not engine.frames.always
        image = view.panes[0].frames[-1].image
        assert image.shape[1] <= 48 and image.shape[0] <= 32 and image.shape[2] == 3  # scaled for the viewer
        assert view.panes[0].key == view.panes[1].key or view.panes[1].key is None
        assert engine.wait(90)
    finally:
        server.close()
        engine.close()


def test_a_path_ten_times_faster_waits_for_the_slower_one_to_play_the_seed_it_shows():
    """Scheduling of the shown seed across paths of very different speeds (real CartPole envs rendering; the paths
    are played by hand so that one runs ten seeds for each of the other's): the fast path takes no new seed until
    the slow one has played the one shown, so the two always have seeds in common to show side by side."""
    import gymnasium as gym

    from tui_eval.frames.hub import FrameHub

    hub = FrameHub(fps=1e6)  # played by hand, faster than any frame budget: only the seed scheduling is under test
    hub.always = True
    taps = {name: hub.tap(name) for name in ("fast", "slow")}
    envs = {name: gym.make("CartPole-v1") for name in taps}

    def play(name: str, seed: int) -> None:
        env, tap = envs[name], taps[name]
        env.shown = None
        obs, _ = env.reset(seed=seed)
        tap.on_reset(env, (0, seed), obs)
        for step in range(3):
            if env.shown is not None or tap.env is env:
                tap.on_step(env, obs, 1.0, step == 2)

    for unit in range(25):
        for seed in range(10 * unit, 10 * unit + 10):
            play("fast", seed)
        play("slow", unit)
    shown = {name: sorted(ep.key[1] for ep in tap.episodes) for name, tap in taps.items()}
    assert shown["slow"] and set(shown["slow"]) <= {0, 10, 110} | set(shown["fast"]), shown
    view = hub.view(["fast", "slow"])
    assert view.keys and [p.key for p in view.panes] == [view.key, view.key], shown
    assert all(p.frames for p in view.panes)


def test_short_episodes_render_within_the_frame_budget_not_twice_an_episode():
    """A path whose episodes last a few milliseconds (real CartPole, five steps each), 400 of them played at 10 fps
    asked: a path takes at most ten new seeds a second to show, so at most about three frames a tenth
    of a second are rendered (a frame in budget plus a shown episode's last), not two per episode."""
    import gymnasium as gym

    from tui_eval.frames.hub import FrameHub

    class CountsRenders(gym.Wrapper):
        renders = 0

        def render(self):
            CountsRenders.renders += 1
            return self.env.render()

    hub = FrameHub(fps=10.0)
    hub.always = True
    tap, env = hub.tap("fast"), CountsRenders(gym.make("CartPole-v1"))
    episodes, began = 0, time.monotonic()
    while episodes < 400:  # a count, not a time: as many episodes on a busy machine as on an idle one
        env.shown = None
        obs, _ = env.reset(seed=episodes)
        tap.on_reset(env, (0, episodes), obs)
        for step in range(5):
            obs, *_ = env.step(step % 2)
            if tap.env is env:
                tap.on_step(env, obs, 1.0, step == 4)
        episodes += 1
    elapsed = time.monotonic() - began
    # the budget is per second of play, whatever the machine's speed (an idle one plays the 400 in well under one)
    assert 2 <= CountsRenders.renders <= 3 * 10 * elapsed + 2, (CountsRenders.renders, elapsed)
    assert all(ep.frames[-1].step == 5 for ep in tap.episodes)  # every shown episode keeps its last frame
