"""A path's process may be ended from two threads at once: the check of a differing seed ends its own process as it
finishes, and the run ends the same process when it closes meanwhile (seen: the run's close raised
FileNotFoundError for the socket the other end had removed). Ending it twice, the socket gone between, is quiet."""

from __future__ import annotations

import os

from tui_eval.isolation import forked
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


def test_a_process_that_wrote_nothing_leaves_no_output_file_and_one_that_wrote_keeps_it():
    """Each path process and each zygote writes its output to a file of its own in the temporary folder, which a
    message cites when the process dies. Most stay empty: at its end, an empty one is removed (a run left one a path
    process and one for its zygote behind), one with something in it kept."""
    end_zygote()
    interpreter = Interpreter.start(("json",))
    zygote_output = forked._zygote.output_file
    interpreter.end()
    assert not os.path.exists(interpreter.output_file)
    end_zygote()
    assert not os.path.exists(zygote_output)

    Interpreter.start(("this",)).end()  # the zygote imports `this`, which prints the Zen of Python
    zygote_output = forked._zygote.output_file
    end_zygote()
    try:
        with open(zygote_output) as output:
            assert "Beautiful is better than ugly." in output.read()
    finally:
        os.unlink(zygote_output)
