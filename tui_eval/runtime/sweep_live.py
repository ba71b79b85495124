"""A sweep with its live leaderboard (tui_eval/ui/sweep_app.py): the rounds run in a thread, each round's
summary shown; quitting stops the sweep after dropping the round in progress."""

from __future__ import annotations

import threading
from typing import Any

from tui_eval.sweep.elimination import Elimination
from tui_eval.sweep.race import Entrant, Race, race, summary
from tui_eval.ui.sweep_app import SweepApp


def run_live(entrants: list[Entrant], settings: Race, path_note: str, title: str) -> dict[str, Any]:
    """The sweep's summary once it ended (or was stopped with `q`)."""
    app = SweepApp(title, settings.stop)
    done: dict[str, Any] = {}
    worker = rounds_for(app, entrants, settings, path_note, done)
    app.call_later(worker.start)
    app.run()
    settings.stop.set()
    worker.join()
    if "error" in done:
        raise done["error"]
    return done["result"]


def rounds_for(app: SweepApp, entrants: list[Entrant], settings: Race, path_note: str,
               done: dict[str, Any]) -> threading.Thread:
    """The thread that runs the rounds and shows each in `app`; its summary (or error) lands in `done`."""

    def after_round(e: Elimination) -> None:
        app.call_from_thread(app.show, summary(e, entrants, path_note, settings.budget), True)

    def rounds() -> None:
        try:
            e = race(entrants, settings, after_round)
            done["result"] = summary(e, entrants, path_note, settings.budget)
            if not settings.stop.is_set():
                app.call_from_thread(app.show, done["result"], False)
        except BaseException as exc:  # shown after the app closes
            done["error"] = exc
            settings.stop.set()
            app.call_from_thread(app.exit)

    return threading.Thread(target=rounds, name="sweep", daemon=True)
