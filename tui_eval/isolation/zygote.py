"""The zygote: `python -m tui_eval.isolation.zygote SOCKET WARM` (started by `forked.Zygote`), a fresh interpreter
that imports the heavy libraries a path needs (torch, RLlib or rsl_rl, gymnasium) once and then forks a path's
process on request, in milliseconds instead of the seconds of a fresh import (a path loaded afresh after a frozen
world, an exact proof's replays).

What a forked process inherits is this pristine interpreter: modules imported, nothing run (no env, no policy, no
thread, no Ray), never the run's state. So the zygote starts no thread of its own: one loop serves the socket and
reaps the children, saying each one's exit status to the run (a child is not the run's child: the run cannot wait
for it itself). When the run's process asks it to end, or goes away, the zygote ends; its children end when their
own pipes close. It ends as the run's own process does (cli.exit_at_once): its exit hooks, then no teardown. Among
them, those that remove what its imports left in the temporary folder: rsl_rl's runners import wandb, which makes
two folders there on import (its media and artifacts), and a zygote killed at every run's end left both behind.
"""

from __future__ import annotations

import atexit
import importlib
import os
import signal
import sys
import traceback
from multiprocessing.connection import Client, wait
from typing import Any

KEY_VARIABLE = "TUI_EVAL_ZYGOTE_KEY"  # the socket's key, hex (read, then dropped)
REAP_S = 0.1  # how often ended children are looked for between requests


def main(address: str, warm: str = "") -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the run's to handle
    for module in filter(None, warm.split(",")):
        try:
            importlib.import_module(module)
        except Exception:  # only a head start: the child's build says what is missing
            pass
    importlib.import_module("tui_eval.isolation.child")
    conn = Client(address, family="AF_UNIX", authkey=bytes.fromhex(os.environ.pop(KEY_VARIABLE)))
    while True:
        try:
            if wait([conn], REAP_S):
                message = conn.recv()
                if message[0] == "fork":
                    conn.send(("forked", message[1], _fork(conn, *message[2:])))
                elif message[0] == "end":
                    _end()
            _reap(conn)
        except (EOFError, OSError):  # the run's process is gone without asking (killed)
            _end(orphaned=True)


def _end(orphaned: bool = False) -> None:
    """The exit hooks (temporary folders the imports made), then no teardown: unloading torch's and Ray's modules
    takes a second or more and frees nothing a process that ends keeps. The forked children never run these hooks
    (they end with `os._exit`): the folders are the zygote's, which they share. `orphaned`: the run's process went
    away without ending it, and with it whoever would have removed this process's output file."""
    try:
        atexit._run_exitfuncs()
    finally:
        if orphaned:
            from tui_eval.isolation.child import orphaned_exit

            orphaned_exit()
        os._exit(0)


def _fork(conn: Any, address: str, key_hex: str, env: dict[str, str], output_file: str) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _become_path_process(conn, address, key_hex, env, output_file)
    return pid


def _become_path_process(conn: Any, address: str, key_hex: str, env: dict[str, str], output_file: str) -> None:
    """In the forked child: a session and an output file of its own, the run's environment, then the path's main
    (tui_eval/isolation/child.py); never returns to the zygote's loop."""
    code = 1
    try:
        conn.close()
        os.setsid()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        out = os.open(output_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.environ.clear()
        os.environ.update(env, TUI_EVAL_PATH_KEY=key_hex)
        from tui_eval.isolation import child

        child.main(address)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _reap(conn: Any) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # no child at all
            return
        if pid == 0:
            return
        conn.send(("exited", pid, os.waitstatus_to_exitcode(status)))


if __name__ == "__main__":
    main(*sys.argv[1:3])
