"""A run's way stays short: the walk that follows the RunSpec from `runtime/execute.py:execute` through the calls it
is passed to (tests/support/call_walk.py) enters at most 25 files (16 today); its climbs (returns into a higher layer)
may not grow past today's 10, and session.py is entered by one call (`open_run`: the plan, the log, the engine)."""

from __future__ import annotations

from tests.support.call_walk import Index, layer_of, walk

MOST_FILES, MOST_CLIMBS, MOST_SESSION_CALLS = 25, 10, 1


def test_the_run_way_is_short():
    found = walk(Index(), "tui_eval.runtime.execute.execute")
    figures = (found.files, found.climbs(layer_of), found.called.count("tui_eval/session.py"))
    print(f"the run's way: {figures[0]} files, {figures[1]} climbs, session.py called into {figures[2]} times")
    assert found.entered[0] == "tui_eval/runtime/execute.py" and "tui_eval/session.py" in found.entered
    assert all(f <= most for f, most in zip(figures, (MOST_FILES, MOST_CLIMBS, MOST_SESSION_CALLS))), found.entered


def test_the_walk_follows_the_spec_into_a_holder():
    """The walk itself: `plan = plan_run(spec)` makes `plan` a holder (as does unpacking such a call's result), and a
    call passing it is followed."""
    found = walk(Index(), "tui_eval.runtime.execute.execute")
    assert "tui_eval/engine/core.py" in found.entered  # start_engine(plan): reached through the plan only
    # `plan, owner, engine = open_run(spec, ...)`: each name unpacked holds it, so the app and the headless run count
    assert {"tui_eval/ui/app.py", "tui_eval/runtime/headless_run.py"} <= set(found.entered)
