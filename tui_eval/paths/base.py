"""What an inference path is: something that turns held-out seeds into EpisodeRecords."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui_eval.feed import SeedFeed
from tui_eval.records import EpisodeRecord

if TYPE_CHECKING:
    from tui_eval.paths.rerun import Side, Trace

Emit = Callable[[EpisodeRecord], None]


class LibraryParts:
    """What the doctor may ask of a library's live parts (its network and pipelines, found inside a path or a user's
    loop) without importing the library: the kind whose paths hold them supplies one (`CheckpointKind.library_parts`;
    RLlib's is tui_eval/integrations/rllib/parts.py). This default knows no library: it finds nothing and tells
    nothing, and the doctor compares what it can read otherwise."""

    def find(self, target: Any) -> dict[str, Any]:
        """The library's module and pipelines reachable from `target` (a user's object): keys `module`,
        `env_to_module`, `module_to_env`, each None when not found."""
        return {"module": None, "env_to_module": None, "module_to_env": None}

    def modules_by_id(self, holder: Any) -> dict[str, Any]:
        """The modules of a multi-module policy reachable from `holder`, by ID ({} when none)."""
        return {}

    def module_logits(self, module: Any, explore: bool) -> Callable[[Any], Any] | None:
        """observation -> the module's action-distribution inputs, or None when it cannot be told."""
        return None

    def pipeline_state(self, pipeline: Any) -> dict[str, Any] | None:
        """The state of a pipeline's stateful pieces, in plain numbers (None: no pipeline or none known)."""
        return None

    def idle_weights(self, module: Any, env_to_module: Any, make_env: Any, explore: bool) -> set[str]:
        """Names of the module's weights that no action depends on (empty when it cannot be told)."""
        return set()


NO_LIBRARY = LibraryParts()


@dataclass
class LiveParts:
    """What a built path uses, as the doctor reads it (tui_eval/doctor/static_diff.py); None: unknown, not
    compared."""

    label: str = "other"  # "connectors", "evaluate", "custom", "rsl", "other"
    module: Any = None  # the policy network (an RLModule, a torch module)
    env_to_module: Any = None  # connector pipelines, when the path has them
    module_to_env: Any = None
    make_env: Callable[[], Any] | None = None  # one env as the path makes it
    recipe: Any = None  # the env's name and config (`.name`, `.env_config`)
    config: Any = None  # the library's config as the path holds it
    explore: bool | None = None  # the explore setting the path really uses, when it can be read
    library: LibraryParts = field(default=NO_LIBRARY)  # how the doctor reads the module and pipelines above


class PathGivenUp(Exception):
    """Raised by `run` when the path's own workers failed too often (already reported through its feed)."""


class InferencePath(ABC):
    """One way of running a checkpoint's policy.

    `run` starts an episode for every seed the feed hands out, emits a record for each finished one,
    and returns once the feed hands out nothing and no episode is in flight (or the feed is cancelled).
    The engine calls `run` again after a pause, so a path keeps its loaded policy between calls.
    """

    name: str
    explore: bool
    #: one line for the user: how this path runs the policy
    description: str = ""
    #: why this path's env shows no frames (a batched simulator's worlds), or None
    frames_problem: str | None = None
    #: processes running its episodes (remote workers); each may fail and be replaced MAX_RESTARTS times
    replicas: int = 1
    #: where its workers run, one line each (node and pid), for the header; empty: in this process
    placement: tuple[str, ...] = ()

    @abstractmethod
    def run(self, feed: SeedFeed, emit: Emit) -> None: ...

    def wait_loaded(self) -> None:
        """Return once the path can run. A path built in this process is loaded when built; one whose
        actors load elsewhere may be built before they are ready, so the run's other paths load meanwhile."""

    def set_explore(self, explore: bool) -> None:
        self.explore = explore

    def activity(self) -> str | None:
        """What the path is doing now, in a few words, for a user waiting on it; read from another thread
        while it runs. None: it does not say (its envs' progress is then read from `self.env`, if any)."""
        return None

    def live_parts(self) -> LiveParts | None:
        """What the doctor can read of this path's live pieces; None: only its episodes are compared."""
        return None

    def keeps_state(self) -> bool:
        """Whether the path's policy keeps a state from step to step (a recurrent actor): the doctor says what a
        fresh path cannot show of a state carried over from earlier episodes."""
        return False

    def replay(self, seed: int) -> Trace | None:
        """One episode on `seed` with every stage this path can show recorded (tui_eval/paths/rerun.py), for
        the doctor; None: it compares only this path's episodes."""
        return None

    def rerun(self, trace: Trace) -> Side | None:
        """What the doctor's probes may run again of this path, given its replay `trace`; None: nothing."""
        return None

    def hold(self) -> None:
        """Pause: start no episode not started yet (seeds queued at remote workers go back to the feed).
        Called by the engine before it shows the paused state; in-process paths take no seed when paused."""

    def release(self) -> None:
        """Resume after `hold`."""

    def close(self) -> None:
        """Release envs, runners, sessions."""


def close_quietly(path: InferencePath) -> None:
    """Close a path that failed, or whose load failed: it may fail to close too, and the first error is the one
    that matters."""
    try:
        path.close()
    except Exception:
        pass


def episodes_at_once(path: InferencePath) -> int:
    """How many episodes `path` plays at a time: its envs (RLlib's paths say `num_envs`; an rsl_rl path's vector
    env does), else one. A path served from another process is kept this many seeds ahead, and more."""
    for owner in (path, getattr(path, "env", None)):
        count = getattr(owner, "num_envs", None)
        if isinstance(count, int) and count > 0:
            return count
    return 1
