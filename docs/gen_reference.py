"""Writes docs/reference/options.md from the run options as the CLI declares them (tui_eval/config/spec.py RUN_OPTIONS).

    python docs/gen_reference.py          (rewrite the page)
    python docs/gen_reference.py --check  (exit 1 when the page is not what the options say: the suite runs this)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "options.md"
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
    from tui_eval.config.spec import RUN_OPTIONS

    rows = []
    for option in RUN_OPTIONS:
        if not option.flags:
            continue  # a field the run fills in
        flags = ", ".join(f"`{flag}`" for flag in option.flags)
        value = "" if option.action == "store_true" else f"`{option.metavar or option.dest.upper()}`"
        if option.action == "append":
            value += " (repeatable)"
        meaning = option.help.replace("%%", "%").replace("|", "\\|")
        rows.append(f"| {flags} | {value} | {meaning} |")
    return HEAD + "\n".join(rows) + "\n" + TAIL


if __name__ == "__main__":
    text = options_markdown()
    if "--check" in sys.argv:
        sys.exit(0 if PAGE.is_file() and PAGE.read_text() == text else 1)
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(text)
