"""`tui-eval stop RUN`: end a live run cleanly (its summary written, status stopped)."""

from __future__ import annotations

import time

from tui_eval.errors import BadInput
from tui_eval.runs import open_log, resolve_run, true_status
from tui_eval.runtime import log_lock

from .parsers import CommandParser

STOP_WAIT_S = 60.0


def main(argv: list[str]) -> int:
    parser = CommandParser(prog="tui-eval stop", description="End a live run cleanly.")
    parser.add_argument("run", help="run name or log file")
    args = parser.parse_args(argv)
    path = resolve_run(args.run)
    if log_lock.holder(path) is None:
        status = true_status(path, open_log(path).meta())
        raise BadInput(f"run {path.stem} is not live ({status}); nothing to stop")
    from tui_eval.runtime.control import ControlClient

    reply = ControlClient(path).send("stop")
    if not reply.get("ok"):
        raise BadInput(f"run {path.stem} refused to stop: {reply.get('error')}")
    deadline = time.monotonic() + STOP_WAIT_S
    while log_lock.holder(path) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    print(f"run {path.stem}: {true_status(path, open_log(path).meta())}")
    return 0
