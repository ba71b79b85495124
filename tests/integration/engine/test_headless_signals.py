"""A headless run inside a longer-lived process (a notebook, a test runner, a user's script calling `main`)
leaves that process's signal handlers as it found them: a hangup after the run must not redirect the
process's output into the finished run's output file."""

from __future__ import annotations

import signal

from tests.support.bad_input import in_process
from tests.support.common import CARTPOLE


def test_a_finished_headless_run_puts_the_hangup_and_term_handlers_back(run_dir, capsys):
    def mine(signum, frame):  # the host process's own handler
        pass

    before = {s: signal.signal(s, mine) for s in (signal.SIGHUP, signal.SIGTERM)}
    try:
        result = in_process(capsys, CARTPOLE, "--headless", "--paths", "connectors", "--episodes", "2")
        assert result.returncode == 0, result.stderr[-2000:]
        assert signal.getsignal(signal.SIGHUP) is mine and signal.getsignal(signal.SIGTERM) is mine
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
