"""A sweep's control channel, both ends: the sweep's process answers `tui-eval stop` and a viewer's keys
(`SweepControl`, over the same `LocalControls` as the app that runs the sweep); a viewer reads the board and
the sweep's state (`poll_log`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_eval.log.lifecycle import RunMeta
from tui_eval.log.store import RunLog

from . import log_lock
from .control import ChannelServer, ControlClient


class LocalControls:
    """The keys of the app that runs the sweep."""

    def __init__(self, settings: Any):
        self.settings = settings

    def stop(self) -> None:
        self.settings.stop.set()

    def toggle_pause(self) -> str:
        paused = self.settings.paused
        (paused.clear if paused.is_set() else paused.set)()
        return self.state()

    def state(self) -> str:
        s = self.settings
        return "stopping" if s.stop.is_set() else "paused" if s.paused.is_set() else "running"


class SweepControl(ChannelServer):
    """`tui-eval stop` and an attached viewer's keys: status, pause, resume, toggle_pause, stop."""

    def __init__(self, settings: Any, log: str | Path):
        self.controls = LocalControls(settings)
        super().__init__(log)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        cmd, controls = request.get("cmd"), self.controls
        if cmd == "stop":
            controls.stop()
        elif cmd in ("pause", "resume", "toggle_pause"):
            if cmd == "toggle_pause" or (cmd == "pause") != (controls.state() == "paused"):
                controls.toggle_pause()
        elif cmd != "status":
            return {"ok": False, "error": f"unknown command {cmd!r}; a sweep takes status, pause, resume, "
                    "toggle_pause, stop"}
        return {"ok": True, "state": controls.state()}


def poll_log(log: Path) -> tuple[dict[str, Any] | None, str]:
    """The board a sweep's log holds, and the sweep's state: running / paused (its process asked), else the
    status the log ends with ("interrupted (process gone)" when its process died)."""
    reader = RunLog(log, readonly=True)
    try:
        meta = reader.meta()
    finally:
        reader.close()
    status = RunMeta.from_json(meta).shown_status()
    if log_lock.holder(log) is not None:
        try:
            return meta.get("sweep_result"), str(ControlClient(log, timeout=2.0).send("status").get("state", status))
        except OSError:
            return meta.get("sweep_result"), status
    if status in ("loading", "running"):
        status = "interrupted (process gone)"
    return meta.get("sweep_result"), status
