"""Silent paths: the watch on a clock the test drives, and the headless progress line on a scripted path
(tests/support/fake_path.py, a fake) whose step hangs; on a real frozen world: tests/integration/engine/."""

from __future__ import annotations

from tests.support.engines import headless_until_silent
from tests.support.fake_path import Script, fake_plan
from tui_eval.engine import stall
from tui_eval.engine.stall import StallWatch, silence_line
from tui_eval.session import start_engine


def test_a_path_is_silent_after_the_first_minute_without_an_episode():
    watch = StallWatch(["evaluate", "connectors"], start=100.0)
    assert watch.silent(159.0) == {}
    watch.episode("connectors", wall_s=2.0, now=150.0)
    assert watch.silent(161.0) == {"evaluate": 61.0}


def test_silence_is_measured_against_the_longest_episode_so_far():
    watch = StallWatch(["evaluate"], start=0.0)
    watch.episode("evaluate", wall_s=50.0, now=50.0)  # slow episodes: 3 x 50 s of quiet is still normal
    assert watch.silent(50.0 + 149.0) == {}
    assert watch.silent(50.0 + 151.0) == {"evaluate": 151.0}
    watch.episode("evaluate", wall_s=1.0, now=210.0)  # a new episode resets the silence
    assert watch.silent(300.0) == {}


def test_a_finished_path_is_never_silent_and_unknown_paths_are_ignored():
    watch = StallWatch(["evaluate"], start=0.0)
    watch.episode("other", wall_s=1.0, now=1.0)
    watch.finished("evaluate")
    assert watch.silent(10_000.0) == {}


def test_the_line_says_what_the_path_is_doing_when_it_can():
    assert silence_line("evaluate", 120.4, None) == "evaluate: no episode for 120 s"
    assert silence_line("evaluate", 61, "in evaluate() call 3 for 58 s") == \
        "evaluate: no episode for 61 s (in evaluate() call 3 for 58 s)"


def test_the_headless_progress_line_names_a_silent_path(tmp_path, monkeypatch):
    monkeypatch.setattr(stall, "MIN_SILENCE_S", 1.0)
    script = Script(num_envs=1, hang=frozenset({303}))  # seed 303's step 5 hangs until released
    engine = start_engine(fake_plan(tmp_path, {"connectors": script}, seeds="301:305", episodes=4, step_timeout=600))
    _, err = headless_until_silent(engine, script.release)
    assert "connectors 4/4" in err.splitlines()[-1]  # released: the run then finishes
