"""A sweep with its live leaderboard (tui_eval/ui/sweep_app.py), and `tui-eval attach` on a sweep's log.

In the foreground the rounds run in a thread, each round's board shown; `q` stops the sweep after dropping the
round in progress. When the terminal goes (SIGHUP), the app leaves and the sweep carries on, its output in
`<log>.out.txt`. A viewer reads the board from the log and steers the sweep through its control channel."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_eval.outputs import stderr_path
from tui_eval.sweep.race import Board, race
from tui_eval.ui.sweep_app import SweepApp

from .app_process import library_output_to
from .control import ControlClient
from .owner import RunOwner
from .sweep_control import LocalControls, poll_log


class ChannelControls:
    """The keys of a viewer: sent to the sweep's process."""

    def __init__(self, log: Path):
        self.client = ControlClient(log)

    def stop(self) -> None:
        self.client.send("stop")

    def toggle_pause(self) -> str:
        reply = self.client.send("toggle_pause")
        if not reply.get("ok"):
            raise RuntimeError(reply.get("error", "refused"))
        return str(reply["state"])

    def state(self) -> str:
        return str(self.client.send("status").get("state", "gone"))


def run_live(board: Board, title: str, earlier: list, owner: RunOwner, on_interrupt: Callable[[], None],
             on_terminate: Callable[[], None]) -> dict[str, Any]:
    """The sweep's summary once it ended (or was stopped with `q`), the app shown meanwhile."""
    settings = board.settings
    app = SweepApp(title, LocalControls(settings), on_hangup=owner.mark_hung_up, on_terminate=on_terminate,
                   on_interrupt=on_interrupt)
    done: dict[str, Any] = {}
    worker = rounds_for(app, board, done, earlier)
    app.call_later(worker.start)
    with library_output_to(stderr_path(owner.log_path)):
        try:
            app.run()
        except Exception:  # drawing on a terminal that is gone may fail; the sweep is what matters
            if not app.hung_up:
                raise
    if app.hung_up:  # go on without a view until the sweep ends or is stopped
        owner.detach_from_terminal()
        owner.install_signals(on_term=on_terminate)  # the app's handlers left with it
    else:
        settings.stop.set()
    worker.join()
    if "error" in done:
        raise done["error"]
    return done["result"]


def rounds_for(app: SweepApp, board: Board, done: dict[str, Any], earlier: list) -> threading.Thread:
    """The thread that runs the rounds, logs them and shows each in `app`; its summary (or error) lands in
    `done`."""
    settings = board.settings

    def show(result: dict[str, Any], running: bool) -> None:
        if app.is_running and not app.hung_up:
            try:
                app.call_from_thread(app.show, result, running)
            except RuntimeError:  # the app closed meanwhile
                pass

    def rounds() -> None:
        try:
            e = race(board.entrants, settings, lambda e: show(board(e), True), board.record.episode, earlier)
            done["result"] = board(e)
            if not settings.stop.is_set():
                show(done["result"], False)
        except BaseException as exc:  # shown after the app closes
            done["error"] = exc
            settings.stop.set()
            if app.is_running:
                app.call_from_thread(app.exit)

    return threading.Thread(target=rounds, name="sweep", daemon=True)


def run_sweep_viewer(log: Path) -> int:
    """`tui-eval attach SWEEP`: the leaderboard, read from the log while the sweep goes on; its keys steer it."""
    app = SweepApp(f"tui-eval sweep {log.stem}", ChannelControls(log), poll=lambda: poll_log(log))
    app.run()
    return 0
