"""What the user asked for: the run's request (RunSpec, with its seed block) and the options that fill it in."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tui_eval.config import option as o
from tui_eval.config.option import Option, Scope, Travel


@dataclass(frozen=True, slots=True)
class SeedBlock:
    """A half-open range of held-out seeds, one seed per episode, the same for every path."""

    start: int
    stop: int | None  # None: unbounded (the live app runs until the user quits)

    @classmethod
    def parse(cls, text: str) -> SeedBlock:
        """Parse `START:STOP` (or `START:` for an open block); raises ValueError with a readable message."""
        start_text, sep, stop_text = text.partition(":")
        if not sep:
            raise ValueError(f"--seeds expects START:STOP (e.g. 1000:1100), got {text!r}")
        try:
            start = int(start_text)
            stop = int(stop_text) if stop_text.strip() else None
        except ValueError:
            raise ValueError(f"--seeds expects integers START:STOP (e.g. 1000:1100), got {text!r}") from None
        if start < 0 or (stop is not None and stop <= start):
            raise ValueError(f"--seeds needs 0 <= START < STOP, got {text!r}")
        return cls(start, stop)

    def __len__(self) -> int:
        if self.stop is None:
            raise TypeError("an open seed block has no length")
        return self.stop - self.start

    def __str__(self) -> str:
        return f"{self.start}:{'' if self.stop is None else self.stop}"


#: envs stepped together per path when neither the user nor the checkpoint's config says
DEFAULT_NUM_ENVS = 8


@dataclass
class RunSpec:
    """Everything the user asked for, after parsing; stored in the run's log."""

    checkpoint: str
    kind: str = ""
    paths: list[str] = field(default_factory=list)
    episodes: int | None = None  # per path; None: until stopped
    seeds: SeedBlock | None = None  # None: the kind's default held-out block
    explore: dict[str, bool] = field(default_factory=dict)  # per path overrides
    num_envs: int | None = None  # None: each path's own default (RLlib's evaluate: its evaluation config)
    device: str = "cpu"
    env_id: str | None = None
    env_config: dict[str, Any] = field(default_factory=dict)
    success_key: str | None = None
    step_timeout: float = 30.0
    module: str | None = None
    log: str | None = None
    json: str | None = None
    report: str | None = None  # --report FILE: the run's picture (tui_eval/report/), drawn when it ends
    fail_on_differ: bool = False
    until_decided: bool = False  # stop once decided (tui_eval.engine.decide); `episodes` is then the budget
    fail_if_worse: float | None = None  # --vs gate: exit 3 when worse than the baseline by more than this
    fail_if_worse_success: float | None = None  # the same for the success rate, in percentage points
    return_bounds: tuple[float, float] | None = None
    equivalence_margin: float | str | None = None  # a number, or "floor": the noise floor's spread
    action_tolerance: float | None = None  # same action on the same observation (None: from the policies' type)
    imports: list[str] = field(default_factory=list)  # the user's modules / .py files, imported first
    custom_paths: list[str] = field(default_factory=list)  # --path NAME=MODULE:FACTORY (paths/custom.py)
    vs: str | None = None  # --vs OTHER_CKPT: the other checkpoint's path as path `vs`
    vs_env: str | None = None  # --vs-env ENV: the first path's policy also on this env, as `<path>@vs-env`
    vs_env_config: dict[str, Any] = field(default_factory=dict)  # --vs-env-config JSON
    workers: int = 1  # --workers N: each path's episodes in N Ray actors (1: in this process, no Ray)
    in_process: bool = False  # --in-process: every path a thread of the run's process (they share its state)
    ray_address: str | None = None  # --ray-address: join this Ray cluster (None: a local loopback Ray)
    #: the options one checkpoint kind declares (its KindPlugin's `options`), by name: text or a switch's True
    kind_options: dict[str, Any] = field(default_factory=dict)

    def kind_option(self, name: str) -> Any:
        """The value of the kind's own option `name` (None when not given)."""
        return self.kind_options.get(name)

    @property
    def on_ray(self) -> bool:
        """True when the paths run in Ray actors (`--workers` above 1, or a cluster named)."""
        return self.workers > 1 or self.ray_address is not None

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        for option in RUN_OPTIONS:
            if option.to_json is not None and data.get(option.dest) is not None:
                data[option.dest] = option.to_json(getattr(self, option.dest))
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunSpec:
        """The spec `to_json` wrote (keys it does not know, from another version, are left out)."""
        known = {f.name for f in dataclasses.fields(cls)}
        spec = cls(**{k: v for k, v in data.items() if k in known})
        for option in RUN_OPTIONS:
            if option.from_json is not None and data.get(option.dest):
                setattr(spec, option.dest, option.from_json(data[option.dest]))
        return spec

    def to_argv(self, *, recording: bool = False) -> list[str]:
        """`CHECKPOINT --flag=value ...`: the command line whose parse gives this spec back (the fields at
        their default left out). `recording`: only what `tui-eval record` takes and a clip of the run keeps."""
        defaults = RunSpec(checkpoint=self.checkpoint)
        argv = [self.checkpoint]
        for option in RUN_OPTIONS:
            if option.scope is not Scope.RUN or (recording and option.recorded is not Travel.KEEP):
                continue
            value = getattr(self, option.dest)
            if value != getattr(defaults, option.dest):
                argv += option.argv(value)
        for name, value in sorted(self.kind_options.items()):  # a kind's options: text, or a switch given
            argv += [kind_flag(name)] if value is True else [] if value in (None, False) else [
                f"{kind_flag(name)}={value}"]
        return argv


def kind_flag(name: str) -> str:
    """The flag of a kind's own option: its name with dashes (`vs_vecenv` is `--vs-vecenv`)."""
    return "--" + name.replace("_", "-")


def seeds_to_json(seeds: SeedBlock) -> list[int | None]:
    return [seeds.start, seeds.stop]


def seeds_from_json(value: list[int | None]) -> SeedBlock:
    return SeedBlock(int(value[0]), value[1])  # type: ignore[arg-type]


def seeds_text(seeds: SeedBlock) -> list[str]:
    return [str(seeds)]


_REFUSED, _RESET = Travel.REFUSE, Travel.RESET
#: Every `tui-eval [run]` option, in the order of `--help`; the RunSpec fields first get their values here.
RUN_OPTIONS: tuple[Option, ...] = (
    Option("checkpoint", (), help="a checkpoint of an installed kind (`--help` lists the kinds installed and what "
           "each opens)",
           localize=o.absolute_file),
    Option("kind", (), help="the checkpoint's kind, filled in when the run is planned"),
    Option("kind_options", (), help="the options one kind declares (tui_eval/kinds/registry.py kind_options), by name"),
    Option("headless", ("--headless",), "no UI: progress on stderr, summary table on stdout", "store_true",
           scope=Scope.TERMINAL, recorded=_REFUSED),
    Option("detach", ("--detach",), "start the run in the background and return; prints its name and log "
           "(tui-eval attach NAME)", "store_true", scope=Scope.TERMINAL, recorded=_REFUSED),
    Option("paths", ("--paths",), "inference paths to run, e.g. evaluate,connectors (default: the kind's two)",
           parse=o.comma_list, render=o.comma_join),
    Option("episodes", ("--episodes",), "episodes per path, then stop (headless default 100)", type=int,
           parse=o.positive("--episodes must be positive, got {}"), recorded=_REFUSED),
    Option("seeds", ("--seeds",), "held-out seed block START:STOP, the same seeds for every path",
           parse=SeedBlock.parse, render=seeds_text, to_json=seeds_to_json, from_json=seeds_from_json,
           recorded=_REFUSED),
    Option("explore", ("--explore",), "per path; default: what the path's library does (repeatable)", "append",
           metavar="PATH=on|off", parse=o.switches, render=o.switches_text),
    Option("custom_paths", ("--path",), "a custom path: your own loop or policy (see README); NAME then usable "
           "in --paths", "append", metavar="NAME=MODULE:FACTORY", localize=o.absolute_custom_paths),
    Option("vs", ("--vs",), "the same path of a second checkpoint as path 'vs', on paired seeds",
           metavar="OTHER_CKPT", localize=o.absolute_file),
    Option("vs_env", ("--vs-env",), "sim-to-sim: the first path's policy also on this env (or simulator), same "
           "seeds, as path '<path>@vs-env'", metavar="ENV"),
    Option("vs_env_config", ("--vs-env-config",), "the second env's kwargs (with --vs-env, or alone: the same env "
           "with other kwargs)", metavar="JSON", render=o.json_text,
           parse=o.json_object("--vs-env-config", "'{\"max_episode_steps\": 100}'",
                               "e.g. --vs-env-config '{\"max_episode_steps\": 100}'")),
    Option("num_envs", ("--num-envs",), "envs stepped together per path (default: what the checkpoint's config "
           "says, else 8)", type=int, parse=o.positive("--num-envs must be positive, got {}"), recorded=_REFUSED),
    Option("device", ("--device",), "cpu or cuda[:i] (where the policy runs)"),
    Option("workers", ("--workers",), "run each path's episodes in N Ray actors (default 1: in this process, no "
           "Ray); a path that runs its library's own evaluation gives it N workers", type=int,
           parse=o.positive("--workers must be 1 or more (1: in this process), got {}"), recorded=_RESET,
           remote=_RESET),
    Option("in_process", ("--in-process",), "run every path as a thread of this process (starts faster; the "
           "paths then share process-wide generators and simulator contexts); default: one path per process",
           "store_true", recorded=_RESET, remote=_RESET),
    Option("ray_address", ("--ray-address",), "with --workers: join this Ray cluster (default: start a local Ray "
           "on loopback)", metavar="auto|HOST:PORT|ray://HOST:PORT", recorded=_RESET, remote=_RESET),
    Option("imports", ("--import",), "import your code first (env registrations, classes the checkpoint refers "
           "to); repeatable", "append", metavar="MODULE_OR_FILE", localize=o.absolute_files),
    Option("env_id", ("--env",), "override the checkpoint's env: a ray.tune.register_env name or a Gymnasium id"),
    Option("env_config", ("--env-config",), "override the env's kwargs, as JSON", render=o.json_text,
           parse=o.json_object("--env-config", "'{\"k\": 1}'", "e.g. --env-config '{\"k\": 1}'")),
    Option("module", ("--module",), "the module whose returns are shown, in a checkpoint of several modules (default: "
           "the team's sum)"),
    Option("success_key", ("--success-key",), "info key holding the success flag at an episode's end"),
    Option("step_timeout", ("--step-timeout",), "a step slower than this (seconds) makes the episode invalid "
           "(default 30)", type=float),
    Option("return_bounds", ("--return-bounds",), "known bounds of an episode's return", metavar="LO:HI",
           parse=o.bounds, render=o.bounds_text, from_json=o.float_pair),
    Option("equivalence_margin", ("--equivalence-margin",), "δ for the 'equivalent' verdict (return units), or "
           "'floor': the spread of the first path's own return differences on seeds replayed alone", metavar="D|floor",
           parse=o.margin),
    Option("action_tolerance", ("--action-tolerance",), "two actions on the same observation are the same policy "
           "within T, absolute and relative (default: from the policies' type, 1e-5 for float32)", type=float,
           metavar="T", parse=o.positive_float("--action-tolerance must be a number above 0, got {}")),
    Option("log", ("--log",), "the run's SQLite log (default: a new file under ./tui-eval-runs/)", recorded=_REFUSED,
           remote=_RESET),
    Option("json", ("--json",), "write the summary here when the run ends", recorded=_REFUSED, remote=_RESET),
    Option("report", ("--report",), "draw the run's report here when it ends (.png, .svg or .html; the report "
           "extra: matplotlib)", metavar="FILE", recorded=_REFUSED, remote=_RESET),
    Option("fail_on_differ", ("--fail-on-differ",), "headless: exit 3 when the verdict is 'differ'", "store_true",
           recorded=_REFUSED),
    Option("until_decided", ("--until-decided",), "stop once the verdict is 'differ' or 'equivalent' (with "
           "--fail-if-worse: once the gate answers); --episodes is the budget", "store_true", recorded=_REFUSED),
    Option("fail_if_worse", ("--fail-if-worse",), "with --vs BASELINE: exit 0 once anytime-95%% not worse than the "
           "baseline by more than D (return units), 3 once worse, 5 undecided at the budget", type=float,
           metavar="D", recorded=_REFUSED),
    Option("fail_if_worse_success", ("--fail-if-worse-success",), "the same gate on the success rate, P in "
           "percentage points", type=float, metavar="P", recorded=_REFUSED),
    Option("frames", ("--frames",), "open the frame panel: the paths playing the same seed, rendered (key v in the "
           "app)", "store_true", scope=Scope.TERMINAL, recorded=_REFUSED),
    Option("frames_renderer", ("--frames-renderer",), "how frames are drawn (default: Kitty graphics or Sixel where "
           "the terminal has them, else half-block cells)", metavar="halfblock|kitty|sixel|off",
           scope=Scope.TERMINAL, recorded=_REFUSED),
    Option("frames_fps", ("--frames-fps",), "frames shown per second at most (default 10)", type=float,
           scope=Scope.TERMINAL, recorded=_REFUSED),
)



def run_option(dest: str) -> Option:
    """The declaration of the run option that sets `dest`."""
    return next(option for option in RUN_OPTIONS if option.dest == dest)

