"""`tui-eval record CKPT --seed S --out FILE [run options]`: a clip of one seed, the paths side by side
(the recording itself: tui_eval.runtime.clip)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_eval.config.option import Travel
from tui_eval.errors import BadInput
from tui_eval.quiet import quiet_libraries

from .parsers import RunParser
from .run import CHECKPOINT_HELP, add_run_options, spec_from_args


def build_parser() -> RunParser:
    parser = RunParser(prog="tui-eval record", description="A clip of one seed, the paths side by side.")
    parser.add_argument("checkpoint", help=CHECKPOINT_HELP)
    parser.add_argument("--seed", type=int, required=True, help="the seed every path plays")
    parser.add_argument("--out", required=True, help="the clip: FILE.gif, or FILE.mp4 (pip install 'tui-eval[mp4]')")
    parser.add_argument("--stride", type=int, default=1, help="keep every Nth step's frame (default 1: every step)")
    add_run_options(parser)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    refuse_options(args)
    quiet_libraries()
    from tui_eval.runtime.clip import record

    return record(spec_from_args(args), args.seed, Path(args.out), args.stride)


def refuse_options(args: Any) -> None:
    """BadInput for a run option a clip cannot take (declared `recorded=Travel.REFUSE`): switches first."""
    from tui_eval.kinds.registry import run_options

    refused = [o for o in run_options() if o.recorded is Travel.REFUSE]
    for option in sorted(refused, key=lambda o: o.action != "store_true"):
        given = getattr(args, option.dest)
        if option.action == "store_true" and given:
            raise BadInput(f"record does not take {option.flag}; see tui-eval record --help")
        if option.action != "store_true" and given is not None:
            raise BadInput(f"record plays one seed (--seed S) on one env per path; it does not take {option.flag}")
