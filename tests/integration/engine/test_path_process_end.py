"""A path's process may be ended from two threads at once: the check of a differing seed ends its own process as it
finishes, and the run ends the same process when it closes meanwhile (seen: the run's close raised
FileNotFoundError for the socket the other end had removed). Ending it twice, the socket gone between, is quiet."""

from __future__ import annotations

import os

import pytest

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


def test_a_process_that_ended_cleanly_leaves_no_output_file_and_one_that_died_keeps_it():
    """Each path process and each zygote writes its output to a file of its own in the temporary folder. What lands
    there in a clean run is a library's chatter at import or nothing: the file goes when its process ends. Where a
    message names it (the process died), it stays, with what the process wrote."""
    end_zygote()
    interpreter = Interpreter.start(("this",))  # the zygote imports `this`, which prints the Zen of Python
    zygote = forked._zygote
    assert zygote is not None
    interpreter.end()
    assert not os.path.exists(interpreter.output_file)
    assert "Beautiful is better than ugly." in open(zygote.output_file).read()
    end_zygote()
    assert not os.path.exists(zygote.output_file)  # it wrote, but ended cleanly: nothing names its file

    Interpreter.start(("this",)).end()
    zygote = forked._zygote
    zygote.process.kill()  # a zygote that dies: the run's next fork says so, naming its output
    zygote.process.wait()
    with pytest.raises(forked.ZygoteGone, match=f"its output: {zygote.output_file}"):
        zygote.fork("no-such-socket", "00", os.devnull)
    end_zygote()
    try:
        assert "Beautiful is better than ugly." in open(zygote.output_file).read()
    finally:
        os.unlink(zygote.output_file)
