"""`tui-eval CHECKPOINT [options]`: the run itself (live app, `--headless` or `--detach`), and the run
options every command that starts paths takes (their declarations: `tui_eval.config.spec.RUN_OPTIONS`)."""

from __future__ import annotations

import argparse
import dataclasses

from tui_eval.config.option import Scope
from tui_eval.config.spec import RUN_OPTIONS, RunSpec, run_option
from tui_eval.engine.decide import decision_options
from tui_eval.errors import BadInput
from tui_eval.quiet import quiet_libraries

from .parsers import RunParser

COMMAND_LIST = """\
commands:
  tui-eval CHECKPOINT [options]            live monitor: both inference paths of the checkpoint, side by side
  tui-eval CHECKPOINT --headless [...]     no UI: progress on stderr, summary table on stdout (--json FILE)
  tui-eval demo [NAME] [options]           the same on a bundled demo checkpoint (tui-eval demo --help
                                           lists them)
  tui-eval diagnose CHECKPOINT [options] [--seed S] [--json FILE]
                                           why do the paths differ? findings, best first
  tui-eval sweep RUN [RUN ...] [options]   which checkpoint of a run is best on held-out seeds (the worse
                                           eliminated as soon as shown); --fail-if-not-best CKPT
  tui-eval CHECKPOINT --detach [...]       start in the background; prints the run's name and log path
  tui-eval record CHECKPOINT --seed S --out FILE.gif|.mp4 [--paths A,B] [--stride N] [run options]
                                           a clip of one seed, the paths side by side (MP4: the mp4 extra)
  tui-eval ls                              list your runs, wherever their logs are: state, episodes, verdict
  tui-eval attach [RUN] [--headless] [--json FILE] [--serve [--port P] [--host H]]
                                           open a run (live: its controls work; or finished); RUN = name or
                                           log path, default the newest; --serve: in a browser
  tui-eval report [RUN] [--out FILE.png|.svg|.html]
                                           a run or sweep (live or finished) as one picture to share:
                                           returns, paired seeds, how the verdict narrowed (report extra)
  tui-eval stop RUN                        end a live run cleanly (summary written, status stopped)
  tui-eval resume RUN [--headless]         continue a run whose process died, from its log
  tui-eval --version | --help

Checkpoints are pickles (a library's config and state, torch's .pt files): loading one runs code stored
in it. Only open checkpoints you trust.
"""
CHECKPOINT_HELP = run_option("checkpoint").help


def kinds_epilog() -> str:
    """The checkpoint kinds installed (tui_eval/kinds/registry.py), after the command list."""
    from tui_eval.kinds.registry import plugins

    lines = [f"  {p.name:<10} {p.opens}" for p in plugins()]
    return COMMAND_LIST + "\ncheckpoint kinds installed:\n" + "\n".join(lines) + "\n"


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Every declared run option with a flag, in `--help` order."""
    from tui_eval.kinds.registry import run_options  # the kinds' own options too (the registry imports no kind)

    for option in run_options():
        option.add_to(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = RunParser(prog="tui-eval", description="Evaluate an RL checkpoint along two inference paths, live.",
                       epilog=kinds_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help=CHECKPOINT_HELP)
    parser.add_argument("--version", action="version", version=f"tui-eval {version()}")
    add_run_options(parser)
    return parser


def version() -> str:
    import tui_eval

    return tui_eval.__version__


def check_device(device: str) -> None:
    if device == "cpu":
        return
    if not (device == "cuda" or (device.startswith("cuda:") and device[5:].isdigit())):
        raise BadInput(f"--device expects cpu, cuda or cuda:INDEX, got {device!r}")
    import torch

    if not torch.cuda.is_available():
        raise BadInput(f"--device {device}: this machine has no usable CUDA (torch {torch.__version__}); "
                       "use --device cpu or install a CUDA build of torch")
    index = int(device[5:]) if ":" in device else 0
    if index >= torch.cuda.device_count():
        raise BadInput(f"--device {device}: only {torch.cuda.device_count()} CUDA device(s) here")


def declared_values(args: argparse.Namespace) -> dict[str, object]:
    """Each RunSpec field's value from the parsed options, as its declaration parses it (BadInput if bad)."""
    defaults = {f.name: f for f in dataclasses.fields(RunSpec)}
    values: dict[str, object] = {"kind_options": _kind_values(args)}
    for option in RUN_OPTIONS:
        if option.scope is not Scope.RUN or not hasattr(args, option.dest):
            continue
        spec_field, given = defaults[option.dest], getattr(args, option.dest)
        if spec_field.default is dataclasses.MISSING and spec_field.default_factory is dataclasses.MISSING:
            values[option.dest] = given  # the checkpoint: argparse requires it
            continue
        default = (spec_field.default_factory() if spec_field.default_factory is not dataclasses.MISSING
                   else spec_field.default)
        try:
            values[option.dest] = option.value(given, default)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
    return values


def _kind_values(args: argparse.Namespace) -> dict[str, object]:
    """The kinds' own options that were given, each as its declaration parses it."""
    from tui_eval.kinds.registry import kind_options

    given: dict[str, object] = {}
    for name, (_, option) in kind_options().items():
        try:
            value = option.value(getattr(args, name, None), None)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
        if value not in (None, False):
            given[name] = value
    return given


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    """The run's spec from the parsed command line: each option as declared, then the checks across them."""
    values = declared_values(args)
    spec = RunSpec(**values)  # type: ignore[arg-type]
    if spec.ray_address is None:  # on a cluster the GPUs are the nodes' (checked when joining)
        check_device(spec.device)
    seeds = spec.seeds
    if spec.episodes is None and args.headless:
        spec.episodes = len(seeds) if seeds is not None and seeds.stop is not None else 100
    if seeds is not None and seeds.stop is not None and spec.episodes is not None and spec.episodes > len(seeds):
        raise BadInput(f"--episodes {spec.episodes} is more than the {len(seeds)} seeds in --seeds {args.seeds}")
    for name, value in decision_options(args).items():
        setattr(spec, name, value)
    return spec


def frame_options(args: argparse.Namespace):
    """The app's frame options; BadInput for a headless run asked to show frames."""
    if args.headless and (args.frames or args.frames_renderer or args.frames_fps):
        raise BadInput("--frames shows frames in the live app; drop --headless (or use tui-eval record for a clip)")
    if args.detach:
        return None
    from tui_eval.ui.frame_renderers import choose

    return choose(args.frames_renderer, args.frames, args.frames_fps)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    spec = spec_from_args(args)
    frames = frame_options(args)
    if args.detach:
        from tui_eval.runtime.detach import start_detached

        return start_detached(spec)
    quiet_libraries()
    from tui_eval.outputs import check_outputs
    from tui_eval.runtime.execute import execute
    from tui_eval.runtime.log_lock import check_free
    from tui_eval.runtime.owner import RunOwner

    check_outputs(spec)  # output paths checked, and the log free, before anything is loaded
    check_free(spec.log or "")
    # the log is taken once the checkpoint is read: a run that never starts leaves none behind
    return execute(spec, lambda: RunOwner(spec), headless=args.headless, frames=frames)
