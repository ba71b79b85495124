"""`tui-eval attach RUN --serve`: the app in a browser, through textual-serve.

textual-serve starts one app process per browser tab; each is `tui-eval attach RUN`, a viewer of the
same run (with its controls when the run is live), never a new run. It listens on 127.0.0.1 unless
`--host` says otherwise, which is said as a warning: whoever reaches the port can control the run.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def serve_viewer(log: Path, host: str, port: int) -> int:
    from textual_serve.server import Server

    if host not in LOOPBACK:
        sys.stderr.write(f"tui-eval: warning: serving on {host}:{port}: anyone who can reach it can watch and "
                         "control this run; prefer the default 127.0.0.1 with SSH port forwarding\n")
    command = shlex.join([sys.executable, "-m", "tui_eval.cli", "attach", str(log)])
    sys.stdout.write(f"serving run {log.stem} at http://{host}:{port}/ (Ctrl-C stops serving; the run goes on)\n")
    sys.stdout.flush()
    Server(command, host=host, port=port, title=f"tui-eval · {log.stem}").serve()
    return 0
