"""Turns a RunSpec into a ready engine: recognise the checkpoint, pick paths, seeds and explore, open the log.
A run enters by `open_run`; `plan_run` and `start_engine` are its two steps (the app takes the second itself)."""

from __future__ import annotations

import importlib.metadata
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar

from tui_eval.config.spec import RunSpec, SeedBlock
from tui_eval.engine.core import Engine
from tui_eval.engine.decide import check_gate_paths, watch_decision
from tui_eval.envs import global_rng
from tui_eval.errors import BadInput, first_line
from tui_eval.integrations.base import CheckpointKind
from tui_eval.kinds import load_kind
from tui_eval.log.lifecycle import RunMeta, RunStatus
from tui_eval.log.store import RunLog
from tui_eval.outputs import default_log_path
from tui_eval.paths.base import InferencePath, close_quietly
from tui_eval.paths.ray_names import end_actors_of, set_run
from tui_eval.stats.exact_proof import CheckRequest

Owner = TypeVar("Owner")  # what holds the run's log (the runtime's RunOwner; session knows it only as given)


def versions() -> dict[str, str]:
    found = {}
    from tui_eval.kinds.registry import distributions

    for dist in ("torch", "gymnasium", *distributions(), "tui-eval"):
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


@dataclass
class Plan:
    """What will run, decided before anything heavy is loaded (shown to the user first)."""

    spec: RunSpec
    kind: CheckpointKind
    paths: list[str]
    explore: dict[str, bool]
    explore_source: dict[str, str]
    seeds: SeedBlock
    seeds_note: str
    log_path: Path
    facts: dict[str, str] = field(default_factory=dict)
    #: the env repeats itself from its reset seed (else no comparison is exact; tui_eval/envs/seeding.py)
    repeatable_seeds: bool = True


class OpenRun(NamedTuple, Generic[Owner]):
    """A run made ready by `open_run`: its plan, the owner of its log, and its engine (loaded, not yet started)."""

    plan: Plan
    owner: Owner
    engine: Engine | None  # None: the paths are left to the app, which loads them in its own thread (start_engine)


def open_run(spec: RunSpec, take_log: Callable[[], Owner], *, load_paths: bool,
             on_planned: Callable[[Plan], object] | None = None,
             on_loaded: Callable[[str, float], object] | None = None) -> OpenRun[Owner]:
    """A run's one way in: plan `spec` (BadInput on unusable input), then take its log (`take_log`: bad input until
    then leaves no log), show the plan (`on_planned`) and, with `load_paths`, load every path into an engine."""
    plan = plan_run(spec)
    try:
        owner = take_log()
    except BaseException:  # the log is another run's, or cannot be made: no process is left waiting for a path
        end_path_processes_ahead()
        raise
    if on_planned is not None:
        on_planned(plan)
    engine = start_engine(plan, on_loaded) if load_paths else None
    return OpenRun(plan, owner, engine)


def plan_run(spec: RunSpec) -> Plan:
    """Read the checkpoint offline and settle every choice; raises BadInput on unusable input."""
    start_path_processes_ahead(spec)
    try:
        return _plan(spec)
    except BaseException:
        end_path_processes_ahead()
        raise


def _plan(spec: RunSpec) -> Plan:
    kind = load_kind(spec)
    spec.kind = kind.name
    paths = spec.paths or list(kind.default_paths)
    unknown = [p for p in paths if p not in kind.path_names]
    if unknown:
        raise BadInput(f"unknown path {unknown[0]!r} for a {kind.name} checkpoint; choose from: "
                       f"{', '.join(kind.path_names)}")
    if len(set(paths)) != len(paths) or len(paths) < 1:
        raise BadInput(f"--paths needs distinct path names, got {','.join(paths)}")
    for name in spec.explore:
        if name not in paths:
            raise BadInput(f"--explore names path {name!r}, which this run does not run ({', '.join(paths)})")
    explore, source = {}, {}
    for name in paths:
        if name in spec.explore:
            explore[name], source[name] = spec.explore[name], "--explore"
        else:
            explore[name], source[name] = kind.default_explore(name), f"library default: {kind.explore_source(name)}"
    if spec.seeds is not None:
        seeds, note = spec.seeds, "chosen with --seeds"
    else:
        seeds, note = kind.default_seeds(spec.episodes)
    log_path = Path(spec.log) if spec.log else default_log_path(spec.checkpoint)
    facts = {"checkpoint": str(kind.checkpoint), "kind": kind.name, **kind.describe(),
             "torch threads": cpu_threads(len(paths), spec.device)[1]}
    set_run(log_path.stem)  # the run's Ray actors are named after it
    if spec.on_ray:  # before anything starts a local Ray of its own, and before an app takes the terminal
        from tui_eval.cluster.connect import connect

        connect(spec, actors=spec.workers * len(paths))
        if ended := end_actors_of(log_path.stem):  # left by this run's killed driver (a resumed run)
            facts["left behind"] = f"{len(ended)} Ray actor(s) of this run's earlier process, ended"
        facts["workers"] = (f"{spec.workers} per path, on the Ray cluster at {spec.ray_address}" if spec.ray_address
                            else f"{spec.workers} per path, on a local Ray (loopback)")
    kind.prepare_process(paths)
    seeding = kind.seed_check()
    facts["env seeding"] = seeding.line
    global_rng.keep_apart(seeding.draws)  # before any env is built, here or in a path's process
    facts["env randomness"] = global_rng.describe(seeding.draws)
    facts["processes"] = processes_line(spec, kind, paths)
    facts["arithmetic"] = arithmetic_line(spec)
    plan = Plan(spec, kind, paths, explore, source, seeds, note, log_path, facts,
                repeatable_seeds=seeding.repeats is not False)
    bounds = return_bounds(plan)
    facts["return bounds"] = (f"{bounds[0]:g} .. {bounds[1]:g} ({bounds[2]})" if bounds is not None
                              else "unknown (asymptotic intervals from 30 episodes; --return-bounds LO:HI)")
    return plan


def arithmetic_line(spec: RunSpec) -> str:
    """Where and in which arithmetic the policies run, and what counts as the same action: a GPU's TF32 or cuDNN
    kernels round otherwise than a CPU export, and the verdict's SAME POLICY is judged to this tolerance."""
    import torch

    cuda = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    tolerance = (f"within {spec.action_tolerance:g} (--action-tolerance)" if spec.action_tolerance is not None else
                 "within 1e-5 for float32 policies, 1e-9 for float64 (the coarser type of two paths decides)")
    return (f"policies on {spec.device} (exports: onnxruntime on the CPU); torch float32 matmul precision "
            f"{torch.get_float32_matmul_precision()}, TF32 matmul {'on' if cuda[0] else 'off'}, cuDNN TF32 "
            f"{'on' if cuda[1] else 'off'}; the same action on the same observation {tolerance}")


def start_path_processes_ahead(spec: RunSpec) -> None:
    """A run with paths in processes of their own starts the first of them now: its heavy imports (torch, RLlib)
    overlap the planning here instead of following it."""
    if spec.in_process or spec.on_ray or len(spec.paths) == 1:  # no --paths: the kind's two
        return
    from tui_eval.isolation.process_path import start_ahead

    if Path(spec.checkpoint).expanduser().exists():
        start_ahead(1, warm_imports(spec))


def warm_imports(spec: RunSpec) -> tuple[str, ...]:
    """What the paths' processes import first: as the first kind (in the order kinds are tried) that opens the
    checkpoint says."""
    from tui_eval.kinds.registry import plugins

    checkpoint = Path(spec.checkpoint).expanduser()
    warm = next((w for plugin in plugins() if (w := plugin.warm_imports(checkpoint)) is not None), None)
    return warm or ("torch", "gymnasium")


def end_path_processes_ahead() -> None:
    """A plan that failed leaves no process waiting for its paths."""
    from tui_eval.isolation.process_path import end_untaken

    end_untaken()


def return_bounds(plan: Plan) -> tuple[float, float, str] | None:
    """`--return-bounds`, else what the kind knows of its env, with where they came from."""
    if plan.spec.return_bounds is not None:
        return (*plan.spec.return_bounds, "--return-bounds")
    return plan.kind.default_return_bounds()


def cpu_threads(paths: int, device: str) -> tuple[int | None, str]:
    """torch's intra-op threads for this run, and a line saying why.

    Policies evaluated here are small and the paths already run in parallel; torch's default (one
    thread per core, per path) oversubscribes the machine and its spinning threads slow every
    forward pass several-fold (seen: a 64x64 Linear at 7 ms with 2 threads, 0.1 ms with 1, on a busy
    2-core machine). TUI_EVAL_TORCH_THREADS=N overrides.
    """
    wanted = os.environ.get("TUI_EVAL_TORCH_THREADS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted), f"{wanted} (TUI_EVAL_TORCH_THREADS)"
    if not device.startswith("cpu"):
        return None, "torch's default (policy on GPU)"
    threads = max(1, (os.cpu_count() or 1) // max(1, paths))
    return threads, (f"{threads} per path ({os.cpu_count()} cores shared by {paths} paths; "
                     "TUI_EVAL_TORCH_THREADS=N to change)")


def share_cpu_threads(paths: int, device: str = "cpu") -> None:
    """Apply `cpu_threads` to torch."""
    threads, _ = cpu_threads(paths, device)
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def start_engine(plan: Plan, on_loaded: Callable[[str, float], object] | None = None) -> Engine:
    """Load every path (heavy: restores policies, may start ray) and return an engine, not yet started."""
    spec = plan.spec
    check_gate_paths(spec, plan.paths)
    share_cpu_threads(len(plan.paths), spec.device)
    log = RunLog(plan.log_path)
    RunMeta(
        spec=spec.to_json(), checkpoint=str(plan.kind.checkpoint), kind=plan.kind.name, env=plan.kind.env_id,
        seeds=[plan.seeds.start, plan.seeds.stop], seeds_note=plan.seeds_note, paths=plan.paths,
        explore=plan.explore, facts=plan.facts,
        repeatable_seeds=plan.repeatable_seeds, versions=versions(), started_at=time.time(), status=RunStatus.LOADING,
    ).write(log)
    built = load_paths(plan, on_loaded)
    RunMeta(contract=deploy_contract(plan.kind)).write(log)
    bounds = return_bounds(plan)
    RunMeta(descriptions={p.name: p.description for p in built}, status=RunStatus.RUNNING,
            return_bounds=None if bounds is None else list(bounds)).write(log)
    engine = Engine(built, log, plan.seeds, episodes=spec.episodes, return_bounds=bounds,
                    equivalence_margin=spec.equivalence_margin, step_timeout=spec.step_timeout,
                    rebuild=path_builder(plan), repeatable=plan.repeatable_seeds, prove=policy_check(plan),
                    action_tolerance=spec.action_tolerance)
    watch_decision(engine, spec)  # --until-decided: ends the run at the answer
    return engine


def deploy_contract(kind: CheckpointKind) -> dict | None:
    """The kind's deployment contract as JSON (None where its exports carry none); one that cannot be read is a note,
    never a failed run."""
    try:
        contract = kind.deploy_contract()
    except Exception as exc:  # the env or the export could not be read: the run goes on without the check
        return {"source": "the export's deployment contract", "items": [],
                "notes": [f"could not be checked against the env: {first_line(exc, 200)}"]}
    return None if contract is None else contract.to_json()


def load_paths(plan: Plan, on_loaded: Callable[[str, float], object] | None = None) -> list[InferencePath]:
    """Every path of the plan, loaded, in its order. Paths whose actors load on Ray are spawned first, so
    that they load while this process builds the others; `on_loaded` hears each one as it is ready."""
    heard = on_loaded or (lambda name, seconds: None)
    in_actors = [name for name in plan.paths if loads_in_actors(plan, name) or in_own_process(plan, name)]
    build = path_builder(plan, wait=False)
    started, built = time.perf_counter(), {}
    name = plan.paths[0]
    try:
        for name in in_actors + [n for n in plan.paths if n not in in_actors]:
            t0 = time.perf_counter()
            built[name] = build(name, plan.explore[name])
            if name not in in_actors:
                heard(name, time.perf_counter() - t0)
        for name in in_actors:
            built[name].wait_loaded()
            heard(name, time.perf_counter() - started)
    except Exception as exc:
        for path in built.values():
            close_quietly(path)
        if isinstance(exc, BadInput):
            raise
        raise BadInput(f"could not load path {name!r}: {first_line(exc, 180)}") from exc
    return [built[name] for name in plan.paths]


def host_path(spec: RunSpec, kind: CheckpointKind, paths: list[str]) -> str | None:
    """The one path that runs in the run's own process (None: every path has a process of its own or runs
    on Ray). It shares that process with no other path: with `--in-process`, all of them do (threads)."""
    if spec.on_ray:
        return None
    preferred = [name for name in paths if kind.needs_run_process(name)]
    return (preferred or paths)[0]


def in_own_process(plan: Plan, name: str) -> bool:
    """Path `name` runs in a process of its own (tui_eval/isolation/process_path.py)."""
    spec = plan.spec
    return not spec.in_process and not spec.on_ray and name != host_path(spec, plan.kind, plan.paths)


def processes_line(spec: RunSpec, kind: CheckpointKind, paths: list[str]) -> str:
    if spec.on_ray:
        return "each path in Ray actors of its own"
    if spec.in_process or len(paths) < 2:
        return ("every path a thread of this process (--in-process): they share its random generators and "
                "simulator contexts" if len(paths) > 1 else "one path, in this process")
    host = host_path(spec, kind, paths)
    return f"{host} in this process, {', '.join(p for p in paths if p != host)} each in a process of its own"


def loads_in_actors(plan: Plan, name: str) -> bool:
    """Path `name` runs in Ray actors of its own (`--workers`/`--ray-address`), not in this process (a path
    that scales its own library's way, RLlib's evaluate, is built here and spreads itself)."""
    return plan.spec.on_ray and not plan.kind.scales_itself(name)


def path_builder(plan: Plan, wait: bool = True) -> Callable[[str, bool], InferencePath]:
    """(name, explore) -> a path: in this process, or in Ray actors (`loads_in_actors`), loaded on return
    with `wait`, else maybe still loading (`InferencePath.wait_loaded`)."""
    kind, spec = plan.kind, plan.spec
    if not spec.on_ray:
        return lambda name, explore: (build_process_path(plan, name, explore, wait) if in_own_process(plan, name)
                                      else kind.build_path(name, explore))
    from tui_eval.cluster.build import build_remote_path

    actors = spec.workers * len(plan.paths)

    def build(name: str, explore: bool) -> InferencePath:
        if not loads_in_actors(plan, name):
            return kind.build_path(name, explore)
        return build_remote_path(spec, name, explore, actors, wait=wait)

    return build


def build_process_path(plan: Plan, name: str, explore: bool, wait: bool = True) -> InferencePath:
    """Path `name` in a process of its own, built there from the run's spec as the run would build it."""
    from tui_eval.cluster.build import portable_spec
    from tui_eval.isolation.process_path import ProcessPath

    threads, _ = cpu_threads(len(plan.paths), plan.spec.device)
    setup = {"cwd": os.getcwd(), "threads": threads or 0, "keep_apart": sorted(global_rng.kept_apart())}
    return ProcessPath(portable_spec(plan.spec), name, explore, setup, wait=wait)


def policy_check(plan: Plan) -> Callable[[CheckRequest], dict]:
    """The engine's check of a differing seed (tui_eval/isolation/check.py), in a fresh process built as a path's is."""
    from tui_eval.cluster.build import portable_spec
    from tui_eval.isolation.check import PolicyCheck

    threads, _ = cpu_threads(len(plan.paths), plan.spec.device)
    setup = {"cwd": os.getcwd(), "threads": threads or 0, "keep_apart": sorted(global_rng.kept_apart()),
             "sys_path": [p for p in sys.path if p]}
    return PolicyCheck(portable_spec(plan.spec), setup, warm_imports(plan.spec))
