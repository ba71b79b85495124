"""What the benchmarks share: seed feeds, the threads a run uses, and how a ratio is measured so that it resolves a
few percent on a small, shared machine.

How a ratio is measured (`measure`):
- **Rounds, each contender once per round, in a new shuffled order each round.** A ratio is taken per round (A's
  env steps/s over B's in that round), so what the machine does for a minute (another process, a frequency step,
  Ray's agents waking up) hits both sides of that round's ratio alike, and no contender always runs first or after
  the same other one.
- **In slices, where the contenders can** (`measure`, `Contender.parts`; `bench_rllib.py --slices`): the round's seeds
  in runs of consecutive seeds, every contender playing a slice in turn before any plays the next, so that the
  contenders of a ratio run within a fraction of a second of each other (this machine's speed drifts by several
  percent over seconds: docs/benchmarks.md).
- **Repeated until narrow.** After `min_rounds`, rounds go on until every ratio's 95 % interval of its median (the
  distribution-free order-statistic interval: [x(k), x(n+1-k)] with k from Binomial(n, 1/2)) is within `width` of
  the median on either side, or `max_rounds` / `budget_s` is reached (then the table says so).
- **Wall clock and CPU time.** Wall is what a user waits for; CPU counts only what works for the contender: the
  thread that runs it (bare loops, paths in this process), plus the path's own process and the thread here that
  reads its records (a path in a process of its own), or this whole process (Ray's, where Ray's own threads serve
  the contender). On a busy machine the CPU ratio stays put while the wall ratio moves.
- **The rest of the machine, per round**: the share of both cores that other processes used while it ran (from
  /proc/stat), printed with the table; a round is not thrown away for it, but a table with a busy median is
  flagged as not quiet.
- **Warm before timed.** A contender that ran right after another in this process finds the code and data they
  share in the caches; a path in a process of its own does not (measured: `connectors` in its own process read
  0.953x the same path here run back to back, 0.922x with two bare-loop rounds before each here). So a contender
  may play a few episodes untimed right before each timed run (`Contender.warm`).
- **How steady the host was** (bench/steadiness.py), before and after the rounds: how far a fixed work unit strayed.
  A wide interval on an unsteady day is the day's, not the paths'.
- Threads as a run of two paths sets them (`pin_threads`): torch's intra-op threads and the native pools (OpenMP,
  OpenBLAS, MKL) at the cores / 2 (one on 2 cores), torch's inter-op threads at one.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")  # /proc/stat's unit
CORES = os.cpu_count() or 1


class ListFeed:
    """Hands out a fixed list of seeds (block 0), then nothing. `heartbeat`: where envs note their steps (the
    engine's feeds carry one, which a run's watchdog reads; give one to measure a path as a run drives it)."""

    cancelled = False

    def __init__(self, seeds, heartbeat=None):
        self._seeds = iter(seeds)
        self.heartbeat = heartbeat

    def take(self):
        seed = next(self._seeds, None)
        return None if seed is None else (seed, 0)


# ------------------------------------------------------------------------------------------------- threads
def pin_threads(paths: int = 2) -> str:
    """Threads as a run of `paths` paths sets them (tui_eval/session.py: cpu_threads, tui_eval/cpu_pools.py), for
    every contender alike; call before torch or NumPy is imported (the pools are read when they load). A line."""
    per_path = str(max(1, CORES // max(1, paths)))
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, per_path)
    import torch

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # set once per process, before any inter-op work
        pass
    return (f"torch threads {torch.get_num_threads()} (inter-op {torch.get_num_interop_threads()}), native pools "
            f"{os.environ['OMP_NUM_THREADS']}, {CORES} cores")


# -------------------------------------------------------------------------------------------------- clocks
def process_cpu(pid: int | str = "self") -> float:
    """CPU seconds a process has used, all its threads; 0 once it is gone. This process: its CPU-time clock (threads
    that ended included). Another: the sum of its live threads' schedstat (nanoseconds, where /proc/PID/stat counts
    10 ms ticks; a path process's threads live as long as it does)."""
    if pid == "self" or pid == os.getpid():
        return time.process_time()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    return sum(_task_cpu(f"/proc/{pid}/task/{task}") for task in tasks)


def _task_cpu(folder: str) -> float:
    try:
        with open(f"{folder}/schedstat") as stat:
            return int(stat.read().split()[0]) / 1e9
    except OSError:  # a thread that just ended
        return 0.0


def thread_cpu(native_id: int | None) -> float:
    """CPU seconds a thread of this process has used (0 for None or a thread that ended)."""
    return 0.0 if native_id is None else _task_cpu(f"/proc/self/task/{native_id}")


def machine_busy() -> float:
    """CPU seconds every core has spent busy since boot (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as stat:
        values = [int(v) for v in stat.readline().split()[1:]]
    return (sum(values[:8]) - values[3] - values[4]) / _TICK


def load_average() -> float:
    return os.getloadavg()[0]


# ---------------------------------------------------------------------------------------------- contenders
@dataclass
class Contender:
    """`run()` plays one round's episodes and returns the env steps they took; `cpu()` is the clock of the CPU
    seconds that work for it (default: the calling thread's); `pids()` the processes of its own (a path's);
    `warm()`, when given, plays a few episodes untimed right before each timed run (module docstring); `parts`, when
    given, play the round in slices, one after another (`measure` with `slices`: contenders take turns per slice)."""

    name: str
    run: Callable[[], int]
    cpu: Callable[[], float] = time.thread_time
    pids: Callable[[], Sequence[int]] = tuple
    warm: Callable[[], object] | None = None
    parts: Sequence[Callable[[], int]] = ()


@dataclass(frozen=True)
class Ratio:
    """A's env steps/s over B's; `target` the least it should be; `group` the table section it is printed in."""

    a: str
    b: str
    label: str
    target: float | None = None
    group: str = ""


@dataclass
class Sample:
    wall: float
    cpu: float
    steps: int


@dataclass
class Measured:
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    background: list[float] = field(default_factory=list)  # per round: share of the machine others used
    rounds: int = 0
    seconds: float = 0.0
    stopped: str = ""  # why the rounds stopped

    def ratios(self, ratio: Ratio, clock: str) -> list[float]:
        """The ratio in each round where both contenders ran."""
        a, b = self.samples.get(ratio.a, []), self.samples.get(ratio.b, [])
        return [_rate(x, clock) / _rate(y, clock) for x, y in zip(a, b)]


def _rate(sample: Sample, clock: str) -> float:
    return sample.steps / max(getattr(sample, clock), 1e-9)


def median_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """(median, low, high): the order-statistic interval that holds the median of the values' distribution with at
    least `confidence` (distribution-free; needs 6 values at 95 %, else it is the range)."""
    xs = sorted(values)
    n = len(xs)
    if not n:
        return math.nan, math.nan, math.nan
    alpha, below, k = (1 - confidence) / 2, 0.0, 0
    while k < n // 2:
        below += math.comb(n, k) / 2**n  # P(B <= k), B ~ Binomial(n, 1/2)
        if below > alpha:
            break
        k += 1
    k = max(k, 1)
    return statistics.median(xs), xs[k - 1], xs[n - k]


def narrow(values: Sequence[float], width: float) -> bool:
    median, low, high = median_interval(values)
    return len(values) >= 6 and max(median - low, high - median) <= width * median


def measure(contenders: Sequence[Contender], ratios: Sequence[Ratio], *, min_rounds: int = 8, max_rounds: int = 60,
            width: float = 0.02, budget_s: float = 600.0, clock: str = "wall", seed: int = 0,
            say: Callable[[str], object] = lambda line: print(line, flush=True)) -> Measured:
    """Rounds of every contender once, in a new shuffled order each round, until each ratio's interval is narrow
    (module docstring). `clock`: what decides narrow ("wall" or "cpu")."""
    measured = Measured(samples={c.name: [] for c in contenders})
    wanted = [r for r in ratios if r.a in measured.samples and r.b in measured.samples]
    sliced = len({len(c.parts) for c in contenders}) == 1 and len(contenders[0].parts) > 1
    if sliced:
        say(f"  each round in {len(contenders[0].parts)} slices, the contenders taking turns on each")
    started = time.perf_counter()
    for index in range(max_rounds):
        shuffle = random.Random(seed * 10_007 + index)
        busy, own, wall = machine_busy(), _own_cpu(contenders), time.perf_counter()
        for name, sample in (_round_in_slices(contenders, shuffle) if sliced else _round(contenders, shuffle)).items():
            measured.samples[name].append(sample)
        wall = time.perf_counter() - wall
        measured.background.append(max(0.0, (machine_busy() - busy - (_own_cpu(contenders) - own)) / (wall * CORES)))
        measured.rounds, measured.seconds = index + 1, time.perf_counter() - started
        say(f"  round {index + 1}: " + ", ".join(f"{r.a}/{r.b} {measured.ratios(r, clock)[-1]:.3f}" for r in wanted[:4])
            + f"{', ...' if len(wanted) > 4 else ''}; others used {measured.background[-1]:.0%} of the machine")
        if index + 1 >= min_rounds and all(narrow(measured.ratios(r, clock), width) for r in wanted):
            measured.stopped = f"every ratio's 95% interval within ±{width:.0%} of its median"
            return measured
        if measured.seconds > budget_s:
            measured.stopped = f"time budget of {budget_s:.0f} s spent"
            return measured
    measured.stopped = f"{max_rounds} rounds"
    return measured


def _own_cpu(contenders: Sequence[Contender]) -> float:
    return process_cpu() + sum(process_cpu(pid) for c in contenders for pid in c.pids())


def _round(contenders: Sequence[Contender], shuffle: random.Random) -> dict[str, Sample]:
    """Each contender plays the whole round once, warmed first, in a shuffled order."""
    return {c.name: _timed(c, c.run, c.warm) for c in shuffle.sample(list(contenders), len(contenders))}


def _round_in_slices(contenders: Sequence[Contender], shuffle: random.Random) -> dict[str, Sample]:
    """The round in slices, the contenders taking turns on each (a new shuffled order per slice), so that those a
    ratio compares run within a fraction of a second of each other: this machine's speed drifts by several percent
    over seconds (docs/benchmarks.md). No warming: each slice follows another contender's, for every contender."""
    totals = {c.name: Sample(0.0, 0.0, 0) for c in contenders}
    for part in range(len(contenders[0].parts)):
        for contender in shuffle.sample(list(contenders), len(contenders)):
            sample, total = _timed(contender, contender.parts[part]), totals[contender.name]
            total.wall, total.cpu = total.wall + sample.wall, total.cpu + sample.cpu
            total.steps += sample.steps
    return totals


def _timed(contender: Contender, run: Callable[[], int], warm: Callable[[], object] | None = None) -> Sample:
    if warm is not None:
        warm()
    cpu, wall = contender.cpu(), time.perf_counter()
    steps = run()
    return Sample(time.perf_counter() - wall, contender.cpu() - cpu, steps)


def in_slices(seeds: Sequence[int], slices: int) -> list[Sequence[int]]:
    """The round's seeds in `slices` runs of consecutive seeds (1: the whole round, no slices)."""
    size = math.ceil(len(seeds) / max(1, slices))
    return [seeds[i:i + size] for i in range(0, len(seeds), size)] if slices > 1 else []


# ------------------------------------------------------------------------------------------- paths, placed
def path_round(path, seeds: Sequence[int], heartbeat=None) -> Callable[[], int]:
    """run() -> the env steps of `seeds` played on `path` (each round the same seeds: the same episodes);
    `heartbeat`: the engine's (tui_eval.feed.Heartbeat), which a run's feeds carry and its envs note steps in."""
    def run() -> int:
        records: list = []
        path.run(ListFeed(seeds, heartbeat), records.append)
        return sum(r.length for r in records)

    return run


def own_process(spec, name: str, warm: tuple[str, ...]):
    """Path `name` of the run `spec` (a RunSpec) in a process of its own, as a run starts it: forked from a zygote
    that imported `warm` (the kind's heavy imports), with the torch threads of a run of two paths."""
    from tui_eval.isolation.process_path import ProcessPath, start_ahead
    from tui_eval.session import cpu_threads

    start_ahead(1, warm)
    threads, _ = cpu_threads(2, spec.device)
    return ProcessPath(spec, name, False, {"cwd": os.getcwd(), "threads": threads or 0, "keep_apart": []})


class PathProcesses:
    """Path `name` in `count` processes of its own that take turns, the next one for each timed call (`turn`).

    Why: one process runs the same code a few percent faster or slower than another, for as long as it lives
    (measured: the same path called the same way in five processes, alternating call by call, read 0.98 to 1.03 of
    it in the bench's process; docs/benchmarks.md). Rounds average out what changes from round to round, not a
    lasting offset of the one process measured; processes taking turns do."""

    def __init__(self, spec, name: str, warm: tuple[str, ...], count: int):
        self.name = name
        self.paths = [own_process(spec, name, warm) for _ in range(max(1, count))]
        self._turn = 0

    def turn(self) -> None:
        """The next process plays the calls from now on."""
        self._turn = (self._turn + 1) % len(self.paths)

    def run(self, feed, emit) -> None:
        self.paths[self._turn].run(feed, emit)

    @property
    def pids(self) -> tuple[int, ...]:
        return tuple(path.pid for path in self.paths)

    def close(self) -> None:
        for path in self.paths:
            path.close()


def warm_for(spec) -> tuple[str, ...]:
    """What a run of `spec` has its path processes import first (tui_eval/session.py: warm_imports)."""
    from tui_eval.session import warm_imports

    return warm_imports(spec)


def path_contender(name: str, path, seeds: Sequence[int], heartbeat=None, warm: int = 0, slices: int = 1) -> Contender:
    """`path` as a contender, warmed by `warm` of the seeds before each timed run (or in `slices`: `measure`). In
    this process its CPU is this thread's; in processes of its own (a ProcessPath, or `PathProcesses` taking turns:
    the next one for each round, or each slice) it is theirs, this thread's (feeding seeds, emitting records) and
    that of the threads here that read their records."""
    processes = path.paths if isinstance(path, PathProcesses) else [path] if getattr(path, "pid", None) else []
    turn = path.turn if isinstance(path, PathProcesses) else lambda: None
    run = path_round(path, seeds, heartbeat)
    warming = path_round(path, seeds[:warm], heartbeat) if warm else None
    parts = [_taking_turns(turn, path_round(path, part, heartbeat)) for part in in_slices(seeds, slices)]
    if not processes:
        return Contender(name, run, warm=warming, parts=parts)
    if warming is None:
        run = _taking_turns(turn, run)
    else:  # the round's warm-up and timed run in the same process
        warming = _taking_turns(turn, warming)
    pids = tuple(p.pid for p in processes)
    readers = [t.native_id for t in threading.enumerate() if t.name == f"path-{processes[0].name}-pipe"]

    def cpu() -> float:
        return time.thread_time() + sum(thread_cpu(r) for r in readers) + sum(process_cpu(pid) for pid in pids)

    return Contender(name, run, cpu=cpu, pids=lambda: pids, warm=warming, parts=parts)


def _taking_turns(turn: Callable[[], None], run: Callable[[], int]) -> Callable[[], int]:
    def taking_turns() -> int:
        turn()
        return run()

    return taking_turns


def placement(kind, spec) -> tuple[str, str]:
    """(the path a default run of `kind` hosts in its own process, the line a run prints of where its paths run)."""
    from tui_eval.session import host_path, processes_line

    paths = list(kind.default_paths)
    return host_path(spec, kind, paths) or "", processes_line(spec, kind, paths)


# -------------------------------------------------------------------------------------------------- report
def verdict(low: float, high: float, target: float | None, rounds: int) -> str:
    """Whether the interval says the target is met: `meets` (all of it at or above), `misses` (all below), else
    `unresolved` (more rounds, or a quieter machine, would tell; so with fewer than 6 rounds, no interval yet)."""
    if target is None:
        return ""
    if rounds < 6:
        return "unresolved (fewer than 6 rounds)"
    return "meets" if low >= target else "misses" if high < target else "unresolved"


def ratio_line(measured: Measured, ratio: Ratio, clocks: Sequence[str] = ("wall", "cpu")) -> str:
    parts = []
    for clock in clocks:
        values = measured.ratios(ratio, clock)
        median, low, high = median_interval(values)
        parts.append(f"{clock} {median:5.3f} [{low:5.3f}, {high:5.3f}] range {min(values):5.3f}-{max(values):5.3f}")
        if clock == clocks[0]:
            judged = verdict(low, high, ratio.target, len(values))
    target = f"  target >= {ratio.target:g}: {judged}" if ratio.target is not None else ""
    return f"  {ratio.label:<58} " + "   ".join(parts) + target


def report(measured: Measured, ratios: Sequence[Ratio], clocks: Sequence[str] = ("wall", "cpu")) -> None:
    """Each contender's median rates, then every ratio with its median, 95 % interval and range over the rounds,
    grouped (the as-placed group first, as given), and how busy the rest of the machine was."""
    print(f"{measured.rounds} rounds in {measured.seconds:.0f} s (stopped: {measured.stopped}); ratios per round, "
          f"median [95% interval of the median] and range; {clocks[0]} judges the target")
    for name, samples in measured.samples.items():
        if samples:
            rates = "  ".join(f"{clock} {statistics.median(_rate(s, clock) for s in samples):9,.0f}"
                              for clock in clocks)
            print(f"  {name:<22} env steps/s: {rates}")
    group = None
    for ratio in ratios:
        if ratio.a in measured.samples and ratio.b in measured.samples and measured.samples[ratio.a]:
            if ratio.group != group:
                group = ratio.group
                print(group)
            print(ratio_line(measured, ratio, clocks))
    if measured.background:
        busy = statistics.median(measured.background)
        print(f"the rest of the machine used {busy:.0%} of it per round (median; most {max(measured.background):.0%})"
              f"; load average now {load_average():.2f}" + ("" if busy < 0.1 else "  << NOT QUIET: rerun when idle"))


def bench_options(parser: argparse.ArgumentParser, *, min_rounds: int = 8, max_rounds: int = 40,
                  budget_s: float = 600.0, slices: int | None = None, processes: int | None = None) -> None:
    """The options of `measure`, on a bench's parser; `--slices` for a bench whose contenders can play in slices,
    `--processes` for one that measures paths in processes of their own (`PathProcesses`)."""
    parser.add_argument("--min-rounds", type=int, default=min_rounds)
    parser.add_argument("--max-rounds", type=int, default=max_rounds)
    parser.add_argument("--width", type=float, default=0.02, help="stop once every ratio's 95%% interval is "
                        "within this share of its median (default 0.02: ±2%%)")
    parser.add_argument("--budget", type=float, default=budget_s, help="seconds of rounds at most (per phase)")
    parser.add_argument("--cpu-time", action="store_true", help="judge (and stop on) CPU time instead of wall")
    if slices is not None:
        parser.add_argument("--slices", type=int, default=slices, help="play each round in this many slices, the "
                            "contenders taking turns on each (1: whole rounds; a phase with a contender that cannot "
                            f"play in slices runs whole rounds); default {slices}")
    if processes is not None:
        parser.add_argument("--processes", type=int, default=processes, help="a path measured in a process of its "
                            "own plays in this many, taking turns round by round (slice by slice): one process runs "
                            f"a few percent faster or slower than another for as long as it lives; default {processes}")


def run_measure(contenders: Sequence[Contender], ratios: Sequence[Ratio], args, seed: int = 0) -> Measured:
    """`measure` with a bench's options (`bench_options`), once what was built is kept out of the collector's
    full passes, as a run keeps what it built before it starts its paths (tui_eval/long_lived.py); how steady the
    host was, before and after (bench/steadiness.py)."""
    from steadiness import steadiness_line

    from tui_eval.long_lived import keep_built_objects

    keep_built_objects()
    print(steadiness_line("before"), flush=True)
    measured = measure(contenders, ratios, min_rounds=args.min_rounds, max_rounds=args.max_rounds, width=args.width,
                       budget_s=args.budget, clock="cpu" if args.cpu_time else "wall", seed=seed)
    print(steadiness_line("after"), flush=True)
    return measured


def clocks_of(args) -> tuple[str, str]:
    return ("cpu", "wall") if args.cpu_time else ("wall", "cpu")


# ------------------------------------------------------------------------- the older, simpler interleaving
def steps_per_second(run: Callable[[], int], clock: Callable[[], float] = time.perf_counter) -> float:
    """Env steps/s of one call of `run` (which returns the env steps it took), timed by `clock`."""
    started = clock()
    steps = run()
    return steps / (clock() - started)


def interleaved(contenders: dict[str, Callable[[], int]], rounds: int = 3,
                clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median steps/s per contender over `rounds`, measured in turns (the benches not yet on `measure`)."""
    seen: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            seen[name].append(steps_per_second(run, clock))
    return {name: statistics.median(values) for name, values in seen.items()}


def rllib_bench_options(description: str, *, episodes: int, checkpoint: Path | None, only_example: str):
    """The options of bench_rllib_multi_agent.py; `checkpoint` None: required."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=episodes)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkpoint", type=Path, default=checkpoint, required=checkpoint is None)
    parser.add_argument("--only", help=f"comma-separated contenders, e.g. {only_example}")
    parser.add_argument("--cpu-time", action="store_true", help="time by this process's CPU time")
    args = parser.parse_args()
    args.only = set(args.only.split(",")) if args.only else None
    return args


def run_title(args) -> str:
    """The first line of bench_rllib_multi_agent.py's report."""
    return (f"{args.checkpoint.name}, {args.num_envs} envs, {args.episodes} episodes per round, "
            f"median of {args.rounds} interleaved rounds, explore off"
            + (", CPU time of this process" if args.cpu_time else ""))

