"""`tui-eval demo [NAME] [options]`: a run on one of the bundled demo checkpoints."""

from __future__ import annotations

from tui_eval.demos import default_demo, demo_checkpoint, demo_help, demo_options

from . import run


def main(argv: list[str]) -> int:
    if any(arg in ("-h", "--help") for arg in argv):
        print(demo_help())
        return 0
    rest, which = argv, default_demo()
    if rest and not rest[0].startswith("-"):
        which, rest = rest[0], rest[1:]
    return run.main([str(demo_checkpoint(which)), *demo_options(which), *rest])
