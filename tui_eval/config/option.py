"""How a run option is declared: once, with its flag, help, parsing, JSON form and where it travels.

`tui_eval.config.spec.RUN_OPTIONS` holds one `Option` per `tui-eval [run]` flag. From it come the run's
argparse arguments, `RunSpec.to_argv` (the command line that gives the same spec back), `RunSpec.to_json`
/ `from_json`, and what a run started elsewhere from the spec keeps (a detached or resumed run, a clip, a
Ray actor). Parsers here raise ValueError with the one line the user reads (the CLI turns it into BadInput).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class Scope(enum.Enum):
    """Whether the option is part of the run or of one terminal's view of it."""

    RUN = "run"  # a RunSpec field, stored in the run's log: a detached or resumed run keeps it
    TERMINAL = "terminal"  # this invocation only (--headless, --frames): a detached or resumed run does not carry it


class Travel(enum.Enum):
    """What a run started from another one's spec (a clip of it, a Ray actor's copy) does with an option."""

    KEEP = "keep"  # the same value
    RESET = "reset"  # the field's default (a clip plays in this process; an actor writes no log)
    REFUSE = "refuse"  # `tui-eval record` refuses the option: a clip is one seed on one env per path


@dataclass(frozen=True)
class Option:
    """One run option. `dest` is the RunSpec field (Scope.RUN) or the argparse name (Scope.TERMINAL).

    `parse` turns what argparse gave (text, or a number for `type=int|float`) into the field's value and
    raises ValueError for bad input; an option given as "" or not at all takes the field's default.
    `render` is parse's inverse: the value as the texts of the flag's occurrences (`to_argv`).
    `to_json` / `from_json` convert a value that JSON cannot hold as it is. `localize` makes a value mean
    the same from another working directory (a Ray actor's copy of the spec).
    """

    dest: str
    flags: tuple[str, ...]  # () for a field no flag sets (the run fills it in)
    help: str = ""
    action: str = "store"  # "store", "store_true" or "append"
    type: Callable[[str], Any] | None = None  # argparse's (its own message for a non-number)
    metavar: str | None = None
    parse: Callable[[Any], Any] | None = None
    render: Callable[[Any], list[str]] | None = None
    to_json: Callable[[Any], Any] | None = None
    from_json: Callable[[Any], Any] | None = None
    scope: Scope = Scope.RUN
    recorded: Travel = Travel.KEEP  # `tui-eval record` and the app's clip of a run
    remote: Travel = Travel.KEEP  # the copy of the spec a Ray actor builds its path from
    localize: Callable[[Any], Any] | None = None

    @property
    def flag(self) -> str:
        return self.flags[0]

    def add_to(self, parser: Any) -> None:
        """Add the option to an argparse parser (absent: None, [] for append, False for a switch)."""
        if not self.flags:
            return
        if self.action == "store_true":
            parser.add_argument(*self.flags, dest=self.dest, action="store_true", help=self.help)
            return
        extra: dict[str, Any] = {"metavar": self.metavar} if self.metavar else {}
        if self.type is not None:
            extra["type"] = self.type
        if self.action == "append":
            extra["default"] = []
        parser.add_argument(*self.flags, dest=self.dest, action=self.action, help=self.help, **extra)

    def value(self, given: Any, default: Any) -> Any:
        """The field's value for what argparse gave; ValueError (the user's one line) when it is unusable."""
        if given is None or given == "" or given == []:
            return default
        return self.parse(given) if self.parse is not None else given

    def argv(self, value: Any) -> list[str]:
        """The command-line words that give `value` back (none for a field no flag sets)."""
        if not self.flags:
            return []
        if self.action == "store_true":
            return [self.flag] if value else []
        texts = self.render(value) if self.render is not None else (
            [str(item) for item in value] if self.action == "append" else [str(value)])
        return [f"{self.flag}={text}" for text in texts]  # `=`: a value may start with '-'


# ---- parsers (ValueError with the message the user sees) and their inverses -------------------------------


def positive(message: str) -> Callable[[int], int]:
    """A check that the number is above 0; `message` has one `{}` for the number given."""

    def check(value: int) -> int:
        if value <= 0:
            raise ValueError(message.format(value))
        return value

    return check


def margin(text: str) -> float | str:
    """`--equivalence-margin`: a positive number (return units), or `floor` (the noise floor's spread, once measured:
    tui_eval/stats/compare.py)."""
    if text.strip().lower() == "floor":
        return "floor"
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"--equivalence-margin takes a number above 0 or 'floor', got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise ValueError(f"--equivalence-margin must be a number above 0 (or 'floor'), got {text}")
    return value


def positive_float(message: str) -> Callable[[float], float]:
    """A check that the number is above 0 and finite; `message` has one `{}` for the number given."""

    def check(value: float) -> float:
        if not 0 < value < float("inf"):
            raise ValueError(message.format(value))
        return value

    return check


def comma_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",")]


def comma_join(items: list[str]) -> list[str]:
    return [",".join(items)]


def json_object(flag: str, example: str, bad_json_tail: str) -> Callable[[str], dict[str, Any]]:
    """A parser of a JSON object; `bad_json_tail` ends the message for text that is not JSON."""

    def parse(text: str) -> dict[str, Any]:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{flag} is not valid JSON ({exc.msg}); {bad_json_tail}") from None
        if not isinstance(value, dict):
            raise ValueError(f"{flag} must be a JSON object, e.g. {example}")
        return value

    return parse


def json_text(value: dict[str, Any]) -> list[str]:
    return [json.dumps(value)]


def bounds(text: str) -> tuple[float, float]:
    """`--return-bounds LO:HI`."""
    try:
        lo, hi = (float(x) for x in text.split(":"))
    except ValueError:
        raise ValueError(f"--return-bounds expects LO:HI, got {text!r}") from None
    if not lo < hi:
        raise ValueError(f"--return-bounds needs LO < HI, got {text!r}")
    return lo, hi


def bounds_text(value: tuple[float, float]) -> list[str]:
    return [f"{value[0]!r}:{value[1]!r}"]


def float_pair(value: Any) -> tuple[float, float]:
    return float(value[0]), float(value[1])


ON, OFF = ("on", "true", "1"), ("off", "false", "0")


def switches(items: list[str]) -> dict[str, bool]:
    """`--explore PATH=on|off`, repeated."""
    explore = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ON + OFF:
            raise ValueError(f"--explore expects PATH=on|off (e.g. --explore evaluate=off), got {item!r}")
        explore[name.strip()] = value.lower() in ON
    return explore


def switches_text(value: dict[str, bool]) -> list[str]:
    return [f"{name}={'on' if on else 'off'}" for name, on in value.items()]


# ---- localizers: the same file named from anywhere ---------------------------------------------------------


def absolute_file(item: str | None) -> str | None:
    """An existing file or folder by its absolute path; anything else (an env id, None) as it is."""
    return str(Path(item).expanduser().absolute()) if item and Path(item).expanduser().exists() else item


def absolute_files(items: list[str]) -> list[str]:
    return [absolute_file(item) or item for item in items]


def absolute_custom_paths(items: list[str]) -> list[str]:
    """`--path NAME=MODULE:FACTORY` with a MODULE that is a .py file named absolutely."""

    def one(item: str) -> str:
        name, _, target = item.partition("=")
        module, _, factory = target.rpartition(":")
        return f"{name}={absolute_file(module)}:{factory}" if module.endswith(".py") else item

    return [one(item) for item in items]
