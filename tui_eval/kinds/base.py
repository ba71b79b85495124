"""What a checkpoint kind is: it recognises a checkpoint, describes it, and builds its inference paths."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from tui_eval.paths.base import InferencePath
from tui_eval.spec import RunSpec, SeedBlock


class CheckpointKind(ABC):
    #: the kind's name, as in `--json` and the run log
    name: str
    #: every path this kind can build, and the two it runs by default
    path_names: tuple[str, ...]
    default_paths: tuple[str, str]

    @classmethod
    @abstractmethod
    def recognise(cls, path: Path) -> bool:
        """Cheap check (no heavy imports): does `path` look like a checkpoint of this kind?"""

    @abstractmethod
    def __init__(self, path: Path, spec: RunSpec):
        """Read the checkpoint offline; raise BadInput (one line: what and what to do) when it is unusable."""

    #: the checkpoint itself (e.g. the newest checkpoint_* of a Tune trial)
    checkpoint: Path
    #: the env the paths run (None: a factory of vector envs names none)
    env_id: str | None
    #: a line for the user when the checkpoint was picked from a larger directory, else None
    resolved_note: str | None = None

    @abstractmethod
    def describe(self) -> dict[str, str]:
        """Facts shown to the user before the run (algorithm, env, module, explore, ...)."""

    @abstractmethod
    def default_seeds(self, episodes: int | None) -> tuple[SeedBlock, str]:
        """A seed block training seeding does not use, and one line saying why it is held out."""

    @abstractmethod
    def default_explore(self, path_name: str) -> bool:
        """What the path's library does by default."""

    @abstractmethod
    def build_path(self, name: str, explore: bool) -> InferencePath:
        """Load and return the named path (heavy: restores the policy)."""

    def scales_itself(self, name: str) -> bool:
        """True when the path spreads over Ray its own library's way (`--workers`); other paths run in
        tui-eval's actors (tui_eval/cluster)."""
        return False

    def prepare_process(self, paths: list[str]) -> None:
        """Process-wide set-up the named paths need, done before any UI takes over stdin/stdout."""

    def default_return_bounds(self) -> tuple[float, float, str] | None:
        """Known bounds on an episode's return and where they come from, if the env allows knowing them."""
        return None
