"""The run options as Python keyword arguments: each option's name is its long flag without the dashes, `-` as `_`
(`--num-envs` → `num_envs`), and its value is what the flag takes, as Python values. They become the command line
the CLI parses, so a keyword is checked exactly as its flag is (`BadInput` for a bad value)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from tui_eval.kinds.registry import run_options

#: options that belong to a terminal (the live app, frames, detaching) or that the facade sets itself (`json`)
NOT_KEYWORDS = frozenset({"headless", "detach", "frames", "frames_renderer", "frames_fps", "json"})


def keyword_of(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def run_keywords() -> dict[str, Any]:
    """keyword -> its option declaration, for every run option a Python call may give."""
    found = {}
    for option in run_options():
        if option.flags and keyword_of(option.flags[-1]) not in NOT_KEYWORDS:
            found[keyword_of(option.flags[-1])] = option
    return found


def to_argv(options: Mapping[str, Any], *, extra: Mapping[str, Any] | None = None) -> list[str]:
    """The command line of `options` (the run's keywords) and `extra` (a command's own keywords, given as
    `{keyword: flag}` values already checked by the caller). TypeError for a keyword no option has."""
    known = run_keywords()
    argv: list[str] = []
    for keyword, value in options.items():
        option = known.get(keyword)
        if option is None:
            raise TypeError(f"unknown run option {keyword!r}; the options are: {', '.join(sorted(known))}")
        argv += _flag_texts(option.flags[-1], option.action, value)
    for flag, value in (extra or {}).items():
        argv += _flag_texts(flag, "store_true" if isinstance(value, bool) else "store", value)
    return argv


def _flag_texts(flag: str, action: str, value: Any) -> list[str]:
    if value is None:
        return []
    if action == "store_true":
        if not isinstance(value, bool):
            raise TypeError(f"{keyword_of(flag)} is a switch: True or False, not {value!r}")
        return [flag] if value else []
    if action == "append":
        items = [value] if isinstance(value, str | os.PathLike) else list(value)
        return [text for item in items for text in (flag, _text(item))]
    return [flag, _text(value)]


def _text(value: Any) -> str:
    """A Python value as the flag's text: lists comma-joined (`paths=["runner", "onnx"]`), mappings as JSON
    (`env_config={"episode_length_s": 1.0}`), ranges as `START:STOP` (`seeds=range(1000, 1100)`)."""
    if isinstance(value, range):
        if value.step != 1:
            raise TypeError(f"seeds take a range with step 1, not {value!r}")
        return f"{value.start}:{value.stop}"
    if isinstance(value, Mapping):
        return json.dumps(dict(value))
    if isinstance(value, Sequence) and not isinstance(value, str):
        return ",".join(_text(v) for v in value)
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)

