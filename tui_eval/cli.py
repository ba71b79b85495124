"""`tui-eval`: parse the command line, turn bad input into one line and exit code 2, dispatch."""

from __future__ import annotations

import argparse
import json
import sys

from tui_eval.decide import decision_options
from tui_eval.exit_codes import EXIT_BAD_INPUT, EXIT_INTERRUPTED
from tui_eval.quiet import quiet_libraries
from tui_eval.spec import BadInput, RunSpec, SeedBlock

COMMANDS = """\
commands:
  tui-eval CHECKPOINT [options]            live monitor: both inference paths of the checkpoint, side by side
  tui-eval CHECKPOINT --headless [...]     no UI: progress on stderr, summary table on stdout (--json FILE)
  tui-eval demo [rllib|pendulum|rsl_rl|lunarlander|pandareach] [options]
                                           the same on a bundled demo checkpoint
  tui-eval diagnose CHECKPOINT [options] [--seed S] [--json FILE]
                                           why do the paths differ? findings, best first
  tui-eval CHECKPOINT --detach [...]       start in the background; prints the run's name and log path
  tui-eval record CHECKPOINT --seed S --out FILE.gif|.mp4 [--paths A,B] [--stride N] [run options]
                                           a clip of one seed, the paths side by side (MP4: the mp4 extra)
  tui-eval ls                              list your runs, wherever their logs are: state, episodes, verdict
  tui-eval attach [RUN] [--headless] [--json FILE] [--serve [--port P] [--host H]]
                                           open a run (live: its controls work; or finished); RUN = name or
                                           log path, default the newest; --serve: in a browser
  tui-eval stop RUN                        end a live run cleanly (summary written, status stopped)
  tui-eval resume RUN [--headless]         continue a run whose process died, from its log
  tui-eval --version | --help

Checkpoints are pickles (RLlib's config and state, torch's .pt files): loading one runs code stored
in it. Only open checkpoints you trust.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage + exits 2; we want one line
        raise BadInput(f"{message}; see tui-eval --help")


def _add_rllib_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--generic-connectors", action="store_true",
                   help="RLlib: run the connector pipelines step by step even when they are the stock ones")
    p.add_argument("--freeze-filters", action="store_true",
                   help="RLlib: MeanStdFilter normalises with the checkpoint's statistics on both paths, as deployed "
                        "(default: it updates while evaluating, as RLlib does)")


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--headless", action="store_true", help="no UI: progress on stderr, summary table on stdout")
    p.add_argument("--detach", action="store_true",
                   help="start the run in the background and return; prints its name and log (tui-eval attach NAME)")
    p.add_argument("--paths", help="inference paths to run, e.g. evaluate,connectors (default: the kind's two)")
    p.add_argument("--episodes", type=int, help="episodes per path, then stop (headless default 100)")
    p.add_argument("--seeds", help="held-out seed block START:STOP, the same seeds for every path")
    p.add_argument("--explore", action="append", default=[], metavar="PATH=on|off",
                   help="per path; default: what the path's library does (repeatable)")
    p.add_argument("--path", dest="custom_paths", action="append", default=[], metavar="NAME=MODULE:FACTORY",
                   help="a custom path: your own loop or policy (see README); NAME then usable in --paths")
    p.add_argument("--vs", metavar="OTHER_CKPT",
                   help="the same path of a second checkpoint as path 'vs', on paired seeds")
    p.add_argument("--vs-env", metavar="ENV", help="sim-to-sim: the first path's policy also on this env (or "
                   "simulator), same seeds, as path '<path>@vs-env'")
    p.add_argument("--vs-env-config", metavar="JSON", help="the second env's kwargs (with --vs-env, or alone: the "
                   "same env with other kwargs)")
    p.add_argument("--vs-vecenv", metavar="MODULE:FUNCTION", help="rsl_rl: the second env as a VecEnv factory")
    p.add_argument("--num-envs", type=int,
                   help="envs stepped together per path (default: RLlib's evaluate its evaluation config, else 8)")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:i] (where the policy runs)")
    p.add_argument("--workers", type=int, default=1,
                   help="run each path's episodes in N Ray actors (default 1: in this process, no Ray); RLlib's "
                        "evaluate path uses N evaluation env runners")
    p.add_argument("--ray-address", metavar="auto|HOST:PORT|ray://HOST:PORT",
                   help="with --workers: join this Ray cluster (default: start a local Ray on loopback)")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE_OR_FILE",
                   help="import your code first (env registrations, classes the checkpoint refers to); repeatable")
    p.add_argument("--env", dest="env_id",
                   help="override the checkpoint's env: a ray.tune.register_env name or a Gymnasium id")
    p.add_argument("--env-config", help="override the env's kwargs, as JSON")
    p.add_argument("--module", help="RLlib module id (multi-module checkpoints)")
    _add_rllib_options(p)
    p.add_argument("--success-key", help="info key holding the success flag at an episode's end")
    p.add_argument("--step-timeout", type=float, default=30.0,
                   help="a step slower than this (seconds) makes the episode invalid (default 30)")
    p.add_argument("--return-bounds", metavar="LO:HI", help="known bounds of an episode's return")
    p.add_argument("--equivalence-margin", type=float, help="δ for the 'equivalent' verdict (return units)")
    p.add_argument("--log", help="the run's SQLite log (default: a new file under ./tui-eval-runs/)")
    p.add_argument("--json", help="write the summary here when the run ends")
    p.add_argument("--fail-on-differ", action="store_true", help="headless: exit 3 when the verdict is 'differ'")
    p.add_argument("--until-decided", action="store_true",
                   help="stop once the verdict is 'differ' or 'equivalent' (with --fail-if-worse: once the gate "
                        "answers); --episodes is the budget")
    p.add_argument("--fail-if-worse", type=float, metavar="D",
                   help="with --vs BASELINE: exit 0 once anytime-95%% not worse than the baseline by more than D "
                        "(return units), 3 once worse, 5 undecided at the budget")
    p.add_argument("--fail-if-worse-success", type=float, metavar="P",
                   help="the same gate on the success rate, P in percentage points")
    p.add_argument("--agent-cfg", help="rsl_rl: the runner config (yaml/json)")
    p.add_argument("--activation", help="rsl_rl: activation when the config is inferred from the weights")
    p.add_argument("--vecenv", help="rsl_rl: module:function returning an rsl_rl VecEnv")
    p.add_argument("--frames", action="store_true",
                   help="open the frame panel: the paths playing the same seed, rendered (key v in the app)")
    p.add_argument("--frames-renderer", choices=None, metavar="halfblock|kitty|sixel|off",
                   help="how frames are drawn (default: Kitty graphics or Sixel where the terminal has them, "
                        "else half-block cells)")
    p.add_argument("--frames-fps", type=float, help="frames shown per second at most (default 10)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tui-eval", description="Evaluate an RL checkpoint along two inference paths, live.",
                     epilog=COMMANDS, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="an RLlib checkpoint directory or Tune run, or an rsl_rl model_*.pt")
    parser.add_argument("--version", action="version", version=f"tui-eval {version()}")
    _add_run_options(parser)
    return parser


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("tui-eval")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _parse_explore(items: list[str]) -> dict[str, bool]:
    explore = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ("on", "off", "true", "false", "1", "0"):
            raise BadInput(f"--explore expects PATH=on|off (e.g. --explore evaluate=off), got {item!r}")
        explore[name.strip()] = value.lower() in ("on", "true", "1")
    return explore


def _check_device(device: str) -> None:
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


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    if args.episodes is not None and args.episodes <= 0:
        raise BadInput(f"--episodes must be positive, got {args.episodes}")
    if args.num_envs is not None and args.num_envs <= 0:
        raise BadInput(f"--num-envs must be positive, got {args.num_envs}")
    if args.workers <= 0:
        raise BadInput(f"--workers must be 1 or more (1: in this process), got {args.workers}")
    seeds = None
    if args.seeds:
        try:
            seeds = SeedBlock.parse(args.seeds)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
    env_config = {}
    if args.env_config:
        try:
            env_config = json.loads(args.env_config)
        except json.JSONDecodeError as exc:
            raise BadInput(f"--env-config is not valid JSON ({exc.msg}); e.g. --env-config '{{\"k\": 1}}'") from None
        if not isinstance(env_config, dict):
            raise BadInput("--env-config must be a JSON object, e.g. '{\"k\": 1}'")
    bounds = None
    if args.return_bounds:
        try:
            lo, hi = (float(x) for x in args.return_bounds.split(":"))
        except ValueError:
            raise BadInput(f"--return-bounds expects LO:HI, got {args.return_bounds!r}") from None
        if not lo < hi:
            raise BadInput(f"--return-bounds needs LO < HI, got {args.return_bounds!r}")
        bounds = (lo, hi)
    if args.ray_address is None:  # on a cluster the GPUs are the nodes' (checked when joining)
        _check_device(args.device)
    episodes = args.episodes
    if episodes is None and args.headless:
        episodes = len(seeds) if seeds is not None and seeds.stop is not None else 100
    if seeds is not None and seeds.stop is not None and episodes is not None and episodes > len(seeds):
        raise BadInput(f"--episodes {episodes} is more than the {len(seeds)} seeds in --seeds {args.seeds}")
    return RunSpec(
        checkpoint=args.checkpoint, paths=[p.strip() for p in args.paths.split(",")] if args.paths else [],
        episodes=episodes, seeds=seeds, explore=_parse_explore(args.explore), num_envs=args.num_envs,
        device=args.device, env_id=args.env_id, env_config=env_config, success_key=args.success_key,
        step_timeout=args.step_timeout, module=args.module, log=args.log, json=args.json,
        fail_on_differ=args.fail_on_differ, return_bounds=bounds, equivalence_margin=args.equivalence_margin,
        agent_cfg=args.agent_cfg, activation=args.activation, vecenv=args.vecenv,
        generic_connectors=args.generic_connectors, freeze_filters=args.freeze_filters, imports=list(args.imports),
        custom_paths=list(args.custom_paths), vs=args.vs, workers=args.workers, ray_address=args.ray_address,
        vs_env=args.vs_env, vs_env_config=parse_env_config(args.vs_env_config), vs_vecenv=args.vs_vecenv,
        **decision_options(args),
    )


def parse_env_config(text: str | None) -> dict:
    from tui_eval.kinds.vs_env import parse_env_config as parse

    return parse(text)


def frame_options(args: argparse.Namespace):
    """The app's frame options; BadInput for a headless run asked to show frames."""
    if args.headless and (args.frames or args.frames_renderer or args.frames_fps):
        raise BadInput("--frames shows frames in the live app; drop --headless (or use tui-eval record for a clip)")
    if args.detach:
        return None
    from tui_eval.ui.frame_renderers import choose

    return choose(args.frames_renderer, args.frames, args.frames_fps)


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    spec = spec_from_args(args)
    frames = frame_options(args)
    if args.detach:
        from tui_eval.runtime.detach import start_detached

        return start_detached(argv, spec)
    quiet_libraries()
    from tui_eval.runtime.execute import execute
    from tui_eval.runtime.owner import RunOwner

    owner = RunOwner(spec)  # output paths checked and the log taken before anything is loaded
    return execute(spec, owner, headless=args.headless, frames=frames)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from tui_eval.local_ray import prepare_environment
    from tui_eval.user_code import make_cwd_importable

    # before anything imports ray: a Ray started here listens on loopback only (a cluster has its own settings)
    prepare_environment(joining_cluster=_joins_cluster(argv))

    make_cwd_importable()  # the user's modules next to their experiment, as with `python -m`
    try:
        if argv and argv[0] == "demo":
            from tui_eval.demos import demo_checkpoint, demo_options

            rest, which = argv[1:], "rllib"
            if rest and not rest[0].startswith("-"):
                which, rest = rest[0], rest[1:]
            return run([str(demo_checkpoint(which)), *demo_options(which), *rest])
        if argv and argv[0] == "diagnose":
            from tui_eval.doctor.command import diagnose

            return diagnose(argv[1:], build_parser, spec_from_args)
        if argv and argv[0] == "record":
            return record_command(argv[1:])
        if argv and argv[0] == "ls":
            from tui_eval.runs import list_runs

            return list_runs(argv[1:])
        if argv and argv[0] in ("attach", "stop", "resume"):
            from tui_eval import runs

            return {"attach": runs.attach, "stop": runs.stop, "resume": runs.resume}[argv[0]](argv[1:])
        return run(argv)
    except BadInput as exc:
        sys.stderr.write(f"tui-eval: error: {exc}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return EXIT_INTERRUPTED


def _joins_cluster(argv: list[str]) -> bool:
    """`--ray-address` given, or resuming a run that had one (read from its log)."""
    if any(a == "--ray-address" or a.startswith("--ray-address=") for a in argv):
        return True
    if len(argv) >= 2 and argv[0] == "resume":
        from tui_eval.runs import saved_ray_address

        return saved_ray_address(argv[1:]) is not None
    return False


def record_command(argv: list[str]) -> int:
    parser = _Parser(prog="tui-eval record", description="A clip of one seed, the paths side by side.")
    parser.add_argument("checkpoint", help="an RLlib checkpoint directory or Tune run, or an rsl_rl model_*.pt")
    parser.add_argument("--seed", type=int, required=True, help="the seed every path plays")
    parser.add_argument("--out", required=True, help="the clip: FILE.gif, or FILE.mp4 (pip install 'tui-eval[mp4]')")
    parser.add_argument("--stride", type=int, default=1, help="keep every Nth step's frame (default 1: every step)")
    _add_run_options(parser)
    args = parser.parse_args(argv)
    for option in ("headless", "detach", "frames", "fail_on_differ", "until_decided"):
        if getattr(args, option):
            raise BadInput(f"record does not take --{option.replace('_', '-')}; see tui-eval record --help")
    for option in ("episodes", "seeds", "log", "json", "num_envs", "frames_renderer", "frames_fps", "fail_if_worse",
                   "fail_if_worse_success"):
        if getattr(args, option) is not None:
            raise BadInput(f"record plays one seed (--seed S) on one env per path; it does not take "
                           f"--{option.replace('_', '-')}")
    quiet_libraries()
    from pathlib import Path

    from tui_eval.frames.record import record

    return record(spec_from_args(args), args.seed, Path(args.out), args.stride)


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
