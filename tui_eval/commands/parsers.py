"""argparse parsers whose errors are one line (BadInput) instead of usage and exit 2."""

from __future__ import annotations

import argparse

from tui_eval.errors import BadInput


class RunParser(argparse.ArgumentParser):
    """The parser of a command that takes the run options; its errors point at `tui-eval --help`."""

    def error(self, message: str):  # argparse prints usage + exits 2; we want one line
        raise BadInput(f"{message}; see tui-eval --help")


class CommandParser(argparse.ArgumentParser):
    """The parser of a command on runs (`ls`, `attach`, ...); its errors point at that command's help."""

    def error(self, message: str):
        raise BadInput(f"{message}; see tui-eval {self.prog.split()[-1]} --help")
