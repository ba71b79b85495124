"""Command lines drawn from the commands' own option declarations (their argparse parsers, read back from the
real commands, not listed here), with the values users get wrong: the wrong type, out of range, empty, very long,
unicode, a path that does not exist, a folder."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st

NO_SUCH_PATH = "/no/such/place/tui-eval-fuzz"


class _Caught(Exception):
    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser


def parser_of(command: Callable[[list[str]], int]) -> argparse.ArgumentParser:
    """The parser `command` builds and parses its arguments with (caught as it is asked to parse)."""
    original = argparse.ArgumentParser.parse_args

    def catch(self, *args, **kwargs):
        raise _Caught(self)

    argparse.ArgumentParser.parse_args = catch  # type: ignore[method-assign]
    try:
        command([])
    except _Caught as caught:
        return caught.parser
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    raise AssertionError(f"{command} parsed no arguments")


def hostile_values(folder: Path) -> st.SearchStrategy[str]:
    """A value for any option, of the kinds a user gets wrong (and some right ones, so that checks after the
    parser's are reached too)."""
    return st.one_of(
        st.sampled_from(["", " ", "-1", "0", "1", "2", "3.5", "1e309", "nan", "-inf", "10000000000000000000000",
                         "abc", "0:5", "5:0", "1:1", ":", "a=b", "x=on", "evaluate,connectors", "cpu", "cuda:9",
                         "{", "{}", "[1]", "null", "mod:fn", ":fn", "mod:", "CartPole-v1", "NoSuchEnv-v0",
                         "ñandú✓\u202e", "\x00", "--", "-", "out.gif", "out.json", "run.sqlite"]),
        st.sampled_from([NO_SUCH_PATH, str(folder), str(folder / "new.sqlite"), str(folder / "no" / "f.json"),
                         "/", "/dev/null", "/proc/1/mem"]),
        st.just("x" * 5000),
        st.text(min_size=1, max_size=30).filter(lambda s: "\x00" not in s),
        st.integers(min_value=-(2 ** 70), max_value=2 ** 70).map(str),
    )


def optional_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions
            if a.option_strings and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


def positional_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not a.option_strings]


@st.composite
def option_sets(draw, parser: argparse.ArgumentParser, values: st.SearchStrategy[str],
                positional: st.SearchStrategy[str], fixed: tuple[str, ...] = ()) -> list[str]:
    """A command line for `parser`: its positionals, then `fixed`, then a few of its options with drawn values
    (a value its declaration accepts or not: its choices, or anything)."""
    argv = [draw(positional) for a in positional_actions(parser) if a.nargs != "?" or draw(st.booleans())]
    argv += list(fixed)
    declared = optional_actions(parser)
    chosen = draw(st.lists(st.sampled_from(declared), max_size=4, unique_by=lambda a: a.dest)) if declared else []
    for action in chosen:
        flag = draw(st.sampled_from(action.option_strings))
        if action.nargs == 0:
            argv.append(flag)
            continue
        choices = [str(c) for c in action.choices] if action.choices else []
        value = draw(st.sampled_from(choices) | values if choices else values)
        argv += [f"{flag}={value}"] if draw(st.booleans()) else [flag, value]
    return argv
