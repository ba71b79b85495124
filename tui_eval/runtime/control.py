"""The local control channel of a live run: a Unix socket only the run's owner can use.

The socket lives in a folder of the user's own (`$XDG_RUNTIME_DIR/tui-eval` or `/tmp/tui-eval-UID`,
mode 0700), is itself mode 0600, and the server checks each peer's uid (SO_PEERCRED). One JSON
request per connection, one JSON reply: `{"cmd": "pause"}` → `{"ok": true, "state": "paused", ...}`.
Nothing listens on the network.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import threading
from pathlib import Path
from typing import Any

from tui_eval.engine.core import Engine
from tui_eval.errors import first_line
from tui_eval.frames.wire import view_to_json, wire_size

COMMANDS = ("status", "pause", "resume", "toggle_pause", "resample", "explore", "stop", "frames")


def socket_path(log: str | Path) -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(base) / "tui-eval" if base else Path(f"/tmp/tui-eval-{os.getuid()}")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    digest = hashlib.sha1(str(Path(log).resolve()).encode()).hexdigest()[:16]
    return folder / f"{digest}.sock"


def engine_status(engine: Engine) -> dict[str, Any]:
    return {"ok": True, "state": engine.state, "blocks": [[b.start, b.stop] for b in engine.blocks],
            "explore": {name: engine.explore_of(name) for name in engine.paths}}


def frames_reply(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """`{"cmd": "frames", "paths": [...], "key": [block, seed] | null, "history": bool, "size": [w, h]}`:
    the frames a viewer shows (and a lease: the run renders only while someone keeps asking)."""
    paths = [p for p in request.get("paths") or list(engine.paths) if isinstance(p, str)]
    engine.frames.want()
    key = request.get("key")
    view = engine.frames.view(paths, (int(key[0]), int(key[1])) if key else None, bool(request.get("history")),
                              wire_size(request.get("size")))
    return {**engine_status(engine), "view": view_to_json(view)}


class ChannelServer:
    """Serves one live process's control channel from a daemon thread: `handle` answers each request."""

    def __init__(self, log: str | Path):
        self.path = socket_path(log)
        self.path.unlink(missing_ok=True)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.path))
        os.chmod(self.path, 0o600)
        self._sock.listen(8)
        self._closed = False
        threading.Thread(target=self._serve, name="tui-eval-control", daemon=True).start()

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                try:
                    self._answer(conn)
                except OSError:
                    continue  # a client that went away mid-request

    def _answer(self, conn: socket.socket) -> None:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _, uid, _ = struct.unpack("3i", creds)
        if uid != os.getuid():
            reply: dict[str, Any] = {"ok": False, "error": "only the run's owner may control it"}
        else:
            try:
                reply = self.handle(json.loads(_read_line(conn)))
            except Exception as exc:  # a bad request must not take the run down
                reply = {"ok": False, "error": first_line(exc)}
        conn.sendall((json.dumps(reply) + "\n").encode())

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def close(self) -> None:
        self._closed = True
        try:
            self._sock.close()
        finally:
            self.path.unlink(missing_ok=True)


class ControlServer(ChannelServer):
    """The control commands of one run's engine."""

    def __init__(self, engine: Engine, log: str | Path):
        self.engine = engine
        super().__init__(log)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        cmd, engine = request.get("cmd"), self.engine
        if cmd == "frames":
            return frames_reply(engine, request)
        if cmd not in COMMANDS:
            return {"ok": False, "error": f"unknown command {cmd!r}; one of {', '.join(COMMANDS)}"}
        if cmd in ("pause", "resume", "toggle_pause", "resample", "explore") and engine.state in ("done", "stopping"):
            return {**engine_status(engine), "ok": False, "error": f"the run is {engine.state}"}
        if cmd == "pause":
            engine.pause()
        elif cmd == "resume":
            engine.resume()
        elif cmd == "toggle_pause":
            engine.toggle_pause()
        elif cmd == "resample":
            engine.resample()
        elif cmd == "explore":
            if request.get("path") not in engine.paths:
                return {"ok": False, "error": f"no path {request.get('path')!r} in this run"}
            engine.set_explore(request["path"], bool(request.get("on")))
        elif cmd == "stop":
            engine.stop()
        return engine_status(engine)


class ControlClient:
    """Sends commands to the run that owns `log` (through its socket)."""

    def __init__(self, log: str | Path, timeout: float = 10.0):
        self.path = socket_path(log)
        self.timeout = timeout

    def available(self) -> bool:
        return self.path.exists()

    def send(self, cmd: str, **args: Any) -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(self.timeout)
            sock.connect(str(self.path))
            sock.sendall((json.dumps({"cmd": cmd, **args}) + "\n").encode())
            return json.loads(_read_line(sock))


def _read_line(sock: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode()
