"""The headless run's progress (tui_eval/runtime/headless_run.py's follow, in the words of tui_eval/headless.py) on a
run of FAKE paths (tests/support/fake_path.py): its own bookkeeping, which real runs also exercise, without the timing
of a real checkpoint."""

from __future__ import annotations

import io
import queue

from tests.support.fake_path import Script, fake_plan
from tui_eval.runtime.headless_run import follow
from tui_eval.session import start_engine


def test_the_last_progress_line_counts_episodes_that_ended_as_the_run_did(tmp_path):
    def modules(seed: int) -> tuple:
        return ("p0", 1.0, 3), ("p1", float(seed), 3)

    scripts = {name: Script(length=3, step_s=0.0, modules=modules) for name in ("evaluate", "connectors")}
    engine = start_engine(fake_plan(tmp_path, scripts, seeds="0:4", episodes=4))
    events: queue.Queue = queue.Queue()
    engine.subscribe(events.put)
    engine.start()
    try:
        assert engine.wait(30)  # the run is over before the view reads a single event
        err = io.StringIO()
        follow(engine, events, err)
    finally:
        engine.close()
    last = err.getvalue().strip().splitlines()[-1]
    assert last.endswith("| p0 evaluate 1.0 connectors 1.0 | p1 evaluate 1.5 connectors 1.5"), last
