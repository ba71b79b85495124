"""The vocabulary every layer speaks: what the user asked for (RunSpec) and what one episode gave (EpisodeRecord)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class EpisodeRecord:
    """One finished episode of one inference path.

    An invalid episode (the simulation blew up, froze or raised) is still an episode: it counts in
    the episode total and never as a success.
    """

    path: str
    seed: int
    ret: float
    length: int
    success: bool | None = None
    invalid: bool = False
    reason: str | None = None
    wall_s: float = 0.0
    block: int = 0  # index of the seed block the seed was drawn from (resample starts a new one)
    explore: bool | None = None

    def __post_init__(self) -> None:
        if self.invalid and self.success:
            object.__setattr__(self, "success", False)

    def to_json(self) -> dict[str, Any]:
        """The record as in the `--json` summary's `episodes` list."""
        return {
            "path": self.path,
            "seed": self.seed,
            "return": self.ret if math.isfinite(self.ret) else None,
            "length": self.length,
            "success": self.success,
            "invalid": self.invalid,
            "reason": self.reason,
            "wall_s": self.wall_s,
            "block": self.block,
            "explore": self.explore,
        }


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
    fail_on_differ: bool = False
    until_decided: bool = False  # stop once decided (tui_eval.decide); `episodes` is then the budget
    fail_if_worse: float | None = None  # --vs gate: exit 3 when worse than the baseline by more than this
    fail_if_worse_success: float | None = None  # the same for the success rate, in percentage points
    return_bounds: tuple[float, float] | None = None
    equivalence_margin: float | None = None
    generic_connectors: bool = False  # rllib: run the connector pipelines step by step even when stock
    freeze_filters: bool = False  # rllib: MeanStdFilter keeps the checkpoint's statistics on both paths
    imports: list[str] = field(default_factory=list)  # the user's modules / .py files, imported first
    custom_paths: list[str] = field(default_factory=list)  # --path NAME=MODULE:FACTORY (paths/custom.py)
    vs: str | None = None  # --vs OTHER_CKPT: the other checkpoint's path as path `vs`
    vs_env: str | None = None  # --vs-env ENV: the first path's policy also on this env, as `<path>@vs-env`
    vs_env_config: dict[str, Any] = field(default_factory=dict)  # --vs-env-config JSON
    vs_vecenv: str | None = None  # --vs-vecenv MODULE:FUNCTION (rsl_rl): the second env as a VecEnv factory
    workers: int = 1  # --workers N: each path's episodes in N Ray actors (1: in this process, no Ray)
    ray_address: str | None = None  # --ray-address: join this Ray cluster (None: a local loopback Ray)
    # rsl_rl only
    agent_cfg: str | None = None
    activation: str | None = None
    vecenv: str | None = None

    @property
    def on_ray(self) -> bool:
        """True when the paths run in Ray actors (`--workers` above 1, or a cluster named)."""
        return self.workers > 1 or self.ray_address is not None

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["seeds"] = None if self.seeds is None else [self.seeds.start, self.seeds.stop]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunSpec:
        """The spec `to_json` wrote (keys it does not know, from another version, are left out)."""
        known = {f.name for f in dataclasses.fields(cls)}
        spec = cls(**{k: v for k, v in data.items() if k in known})
        if data.get("seeds"):
            spec.seeds = SeedBlock(int(data["seeds"][0]), data["seeds"][1])
        if data.get("return_bounds"):
            spec.return_bounds = (float(data["return_bounds"][0]), float(data["return_bounds"][1]))
        return spec


class BadInput(Exception):
    """The user's input cannot be used. The message is one line: what is wrong and what to do.

    The CLI prints it and exits 2, never with a traceback.
    """
