"""A run's way stays short: the walk that follows the RunSpec from `runtime/execute.py:execute` through the calls it
is passed to (tests/support/call_walk.py) enters at most 25 files; its climbs (returns into a higher layer) and its
calls into session.py may not grow past what they are today (14 and 2; the aim is 10 and 1)."""

from __future__ import annotations

from tests.support.call_walk import Index, layer_of, walk

MOST_FILES, MOST_CLIMBS, MOST_SESSION_CALLS = 25, 14, 2


def test_the_run_way_is_short():
    found = walk(Index(), "tui_eval.runtime.execute.execute")
    figures = (found.files, found.climbs(layer_of), found.called.count("tui_eval/session.py"))
    print(f"the run's way: {figures[0]} files, {figures[1]} climbs, session.py called into {figures[2]} times")
    assert found.entered[0] == "tui_eval/runtime/execute.py" and "tui_eval/session.py" in found.entered
    assert all(f <= most for f, most in zip(figures, (MOST_FILES, MOST_CLIMBS, MOST_SESSION_CALLS))), found.entered


def test_the_walk_follows_the_spec_into_a_holder():
    """The walk itself: `plan = plan_run(spec)` makes `plan` a holder, and a call passing it is followed."""
    found = walk(Index(), "tui_eval.runtime.execute.execute")
    assert "tui_eval/engine/core.py" in found.entered  # start_engine(plan): reached through the plan only
