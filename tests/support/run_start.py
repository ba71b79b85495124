"""Ending a run the moment it would start playing: every check before it (parsing, outputs, imports, reading and
planning the real checkpoint, taking the log) runs for real, and a test that only asks "did it get that far"
does not pay for episodes."""

from __future__ import annotations


class RunStarts(Exception):
    """The run got past every check: it would now step its paths."""


def stop_runs_at_start(monkeypatch) -> None:
    """Each way a run starts (its engine, its app, its background process) raises RunStarts instead."""
    import tui_eval.runtime.app_process as app_process
    import tui_eval.runtime.detach as detach
    import tui_eval.session as session

    def starts(*args, **kwargs):
        raise RunStarts

    monkeypatch.setattr(session, "start_engine", starts)
    monkeypatch.setattr(app_process, "run_app", starts)
    monkeypatch.setattr(detach, "start_in_background", starts)
