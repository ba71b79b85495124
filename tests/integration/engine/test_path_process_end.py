"""A path's process may be ended from two threads at once: the check of a differing seed ends its own process as it
finishes, and the run ends the same process when it closes meanwhile (seen: the run's close raised
FileNotFoundError for the socket the other end had removed). Ending it twice, the socket gone between, is quiet."""

from __future__ import annotations

import os

from tui_eval.isolation.forked import end_zygote
from tui_eval.isolation.process_path import Interpreter


def test_a_path_process_ended_after_its_socket_went_ends_quietly():
    end_zygote()  # a zygote of this test's own (light) imports, ended after it: later tests start theirs
    interpreter = Interpreter.start(("json",))
    try:
        assert interpreter.process.poll() is None
        os.unlink(interpreter.listener.address)  # what the other thread's end() did first
        interpreter.end()
        interpreter.end()
        assert interpreter.process.poll() is not None and not os.path.exists(interpreter.folder)
    finally:
        end_zygote()
