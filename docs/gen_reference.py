"""Writes docs/reference/options.md from the run options as the CLI declares them (tui_eval/config/spec.py RUN_OPTIONS),
and docs/reference/api.md from the Python facade (tui_eval/api: its calls, results and keywords).

    python docs/gen_reference.py          (rewrite the pages)
    python docs/gen_reference.py --check  (exit 1 when a page is not what the code says: the suite runs this)
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "options.md"
API_PAGE = ROOT / "docs" / "reference" / "api.md"
HEAD = """# Options

Every option a run understands (`tui-eval CHECKPOINT`, `tui-eval demo`, `tui-eval diagnose`; `tui-eval record`
takes them too). Generated from the options as the command line declares them (`docs/gen_reference.py`):
what `tui-eval --help` prints, as a table.

| option | value | meaning |
|---|---|---|
"""


TAIL = """
## Environment variables

`TUI_EVAL_TORCH_THREADS=N` sets torch's CPU threads (default: the cores shared among the paths, since small policies
run fastest single-threaded when paths run side by side); OpenMP, OpenBLAS and MKL pools get half the cores unless
`OMP_NUM_THREADS`, `OPENBLAS_NUM_THREADS` or `MKL_NUM_THREADS` say otherwise (spinning pools of two paths on every
core slowed a path 40-fold here). `TUI_EVAL_SPAWN_PATHS=1` starts each path's process as a fresh interpreter instead
of forking it from the zygote (Linux). `TUI_EVAL_CACHE` is where policies that tui-eval exports itself are kept
(default `~/.cache/tui-eval`). `TUI_EVAL_STATE` is where the registry of runs lives (`tui-eval ls`).
"""


def options_markdown() -> str:
    sys.path.insert(0, str(ROOT))
    from tui_eval.kinds.registry import run_options

    rows = []
    for option in run_options():
        if not option.flags:
            continue  # a field the run fills in
        flags = ", ".join(f"`{flag}`" for flag in option.flags)
        value = "" if option.action == "store_true" else f"`{option.metavar or option.dest.upper()}`"
        if option.action == "append":
            value += " (repeatable)"
        meaning = option.help.replace("%%", "%").replace("|", "\\|")
        rows.append(f"| {flags} | {value} | {meaning} |")
    return HEAD + "\n".join(rows) + "\n" + TAIL


API_HEAD = """# Python API reference

Generated from `tui_eval.api` (`docs/gen_reference.py`); how to use it: [Python API](../api.md).
"""


def api_markdown() -> str:
    sys.path.insert(0, str(ROOT))
    from tui_eval import api

    parts = [API_HEAD, "## Calls\n"]
    for name in ("evaluate", "diagnose", "sweep", "assert_same_policy"):
        call = getattr(api, name)
        parts.append(f"### `api.{name}{str(inspect.signature(call)).replace(chr(39), '')}`\n\n{inspect.getdoc(call)}\n")
    parts.append("## Results\n")
    for result in (api.Evaluation, api.PathResult, api.Diagnosis, api.Sweep):
        parts.append(f"### `api.{result.__name__}`\n\n{inspect.getdoc(result)}\n")
        members = [(n, m) for n, m in vars(result).items() if not n.startswith("_")
                   and isinstance(m, property | type(api.Evaluation.to_json))]
        parts += [f"- `{n}`: {' '.join((inspect.getdoc(m) or '').split())}" for n, m in members]
        parts += [f"- `{f.name}`: `{f.type}`" for f in dataclasses.fields(result) if f.repr]
        parts.append("")
    parts.append("## Keywords\n\n| keyword | flag | meaning |\n|---|---|---|")
    for keyword, option in api.run_keywords().items():
        meaning = option.help.replace("%%", "%").replace("|", "\\|")
        parts.append(f"| `{keyword}` | `{option.flags[-1]}` | {meaning} |")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    pages = {PAGE: options_markdown(), API_PAGE: api_markdown()}
    if "--check" in sys.argv:
        sys.exit(0 if all(p.is_file() and p.read_text() == text for p, text in pages.items()) else 1)
    for page, text in pages.items():
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(text)
