"""What a checkpoint kind is: it recognises a checkpoint, describes it, and builds its inference paths.

A kind declares its paths in one catalog (`PathEntry`: name -> how to build it, what its library does by
default about exploring, and where that default comes from). `--path`, `--vs` and `--vs-env` add entries to
a loaded kind's catalog (tui_eval/kinds/extra.py, vs_env.py); nothing else dispatches on path names.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_eval.config.spec import RunSpec, SeedBlock
from tui_eval.envs.seeding import NOT_CHECKED, SeedCheck, check_seed_repeat
from tui_eval.errors import BadInput
from tui_eval.paths.base import NO_LIBRARY, InferencePath, LibraryParts

if TYPE_CHECKING:
    from tui_eval.paths.custom import CustomPath


@dataclass(frozen=True)
class KindDemo:
    """A demo checkpoint a kind ships inside its own package (`tui-eval demo NAME`)."""

    name: str
    #: the checkpoint, relative to the kind's package folder
    path: str
    #: one line for `tui-eval demo --help`
    text: str
    #: options it runs with unless the command line says otherwise (read before the user's own)
    options: tuple[str, ...] = ()
    #: modules it needs beyond tui-eval's own dependencies, and the command that installs them
    needs: tuple[str, ...] = ()
    install: str = ""
    #: True: `path` is relative to tui-eval's shared demo folder (`tui_eval/demo_checkpoints`, where the built-in
    #: kinds keep theirs with the scripts that trained them), not to the kind's package
    shared_folder: bool = False


@dataclass(frozen=True)
class KindPlugin:
    """How tui-eval finds a checkpoint kind: one value, named by the `tui_eval.kinds` entry point of the package
    that offers it (tui_eval/kinds/registry.py). Cheap to import: the kind's class is loaded only when its turn
    to recognise a checkpoint comes."""

    name: str  # as in `--json` and the run log
    #: "module:Class" of the CheckpointKind
    kind: str
    #: what the user passes for it, for help and error lines ("an rsl_rl model_*.pt file")
    opens: str
    #: the distributions whose versions a run's log keeps
    distributions: tuple[str, ...] = ()
    #: kinds are tried in this order (lower first): a more specific kind before the one it refines
    order: int = 100
    #: the library's loggers, kept to errors during a run (tui_eval/quiet.py)
    loggers: tuple[str, ...] = ()
    #: the demo checkpoints it ships in its package (listed and played by `tui-eval demo`)
    demos: tuple[KindDemo, ...] = ()
    #: "module:function" taking the checkpoint's Path: the modules to import ahead in a path's process when this kind
    #: opens it (None when it does not); cheap (the filesystem only), it runs before the checkpoint is read
    warm_up: str | None = None
    #: "module:ATTR" of the kind's own run options (a tuple of `tui_eval.config.option.Option`), each a switch or a
    #: text whose flag is its name with dashes; their values travel in `RunSpec.kind_options`
    options: str | None = None

    @property
    def package(self) -> str:
        return self.kind.split(":")[0].rsplit(".", 1)[0]

    def load(self) -> type[CheckpointKind]:
        return _attribute(self.kind)

    def declared_options(self) -> tuple[Any, ...]:
        """The kind's own run options (none when it declares none)."""
        return tuple(_attribute(self.options)) if self.options else ()

    def warm_imports(self, checkpoint: Path) -> tuple[str, ...] | None:
        """The modules a path of this kind imports first, when this kind opens `checkpoint`; else None."""
        return _attribute(self.warm_up)(checkpoint) if self.warm_up else None


def _attribute(target: str) -> Any:
    import importlib

    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Candidate:
    """One checkpoint of a training run, for `tui-eval sweep`, with what training recorded of it."""

    path: Path
    iteration: int | None = None
    #: training's own number for this checkpoint (what a user would pick by), and its name
    metric: float | None = None
    metric_name: str | None = None
    #: how training would pick among the run's checkpoints: "metric" (the highest, as Tune's get_best_result)
    #: or "newest" (the last one saved, as an rsl_rl user deploys)
    picked_by: str = "newest"


@dataclass(frozen=True)
class PathEntry:
    """One path a kind can build."""

    name: str
    #: load the path (heavy: restores the policy), exploring or not
    build: Callable[[bool], InferencePath]
    #: what the path's library does when the user does not say (`--explore`)
    default_explore: Callable[[], bool]
    #: where that default comes from, shown beside it ("evaluation_config.explore", ...)
    explore_source: str
    #: envs the path steps together and where that number comes from; None: the kind does not say
    envs: Callable[[], tuple[int, str]] | None = None
    #: the path spreads over Ray its own library's way under `--workers` (else tui-eval's actors run it)
    scales_itself: bool = False


def borrowed_entry(owner: CheckpointKind, base: str, name: str, where: str, explore_note: str = "") -> PathEntry:
    """`owner`'s path `base` as path `name` of another kind's catalog (`--vs`, `--vs-env`): the built path
    carries its name, its owner and base, and says `where` it comes from."""
    entry = owner.catalog[base]

    def build(explore: bool) -> InferencePath:
        path: Any = entry.build(explore)
        path.name, path.vs_kind, path.vs_base = name, owner, base
        path.description = f"{path.description} ({where})"
        return path

    return replace(entry, name=name, build=build, explore_source=entry.explore_source + explore_note)


class PathCatalog:
    """A kind's paths by name, in the order they were declared."""

    def __init__(self, kind_name: str, entries: list[PathEntry]):
        self.kind_name = kind_name
        self._entries: dict[str, PathEntry] = {}
        for entry in entries:
            self.add(entry)

    def add(self, entry: PathEntry) -> None:
        if entry.name in self._entries:
            raise BadInput(f"path name {entry.name!r} is taken; choose another")
        self._entries[entry.name] = entry

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> PathEntry:
        if name not in self._entries:
            raise BadInput(f"path {name!r} is not a {self.kind_name} path; choose from: {', '.join(self.names)}")
        return self._entries[name]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)


class CheckpointKind(ABC):
    #: the kind's name, as in `--json` and the run log
    name: str
    #: the two paths it runs by default
    default_paths: tuple[str, str]
    #: the kinds behind `--vs` and `--vs-env` paths, when the run has them
    vs_kind: CheckpointKind | None = None
    vs_env_kind: CheckpointKind | None = None
    #: `--path` name -> (its spec, its loaded factory), set by tui_eval/kinds/extra.py
    custom_factories: dict[str, tuple[Any, Any]]
    #: how the doctor reads the library's module and pipelines inside a `--path` loop (none known by default)
    library_parts: LibraryParts = NO_LIBRARY

    @classmethod
    def settings_read_first(cls, path: Path) -> list[Path] | None:
        """The settings files (JSON, YAML) the kind reads while it opens `path`, checked whole before it does; None:
        every settings file under `path` (a kind whose folder holds other programs' files says which are its own).
        The checkpoint the kind then picks is checked file by file before anything loads."""
        return None

    @classmethod
    @abstractmethod
    def recognise(cls, path: Path) -> bool:
        """Cheap check (no heavy imports): does `path` look like a checkpoint of this kind?"""

    @classmethod
    def candidates(cls, path: Path) -> list[Candidate]:
        """Every checkpoint at or below `path` that a sweep compares, oldest first ([]: not this kind's)."""
        return [Candidate(path)] if cls.recognise(path) else []

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
    def own_paths(self) -> list[PathEntry]:
        """The paths this kind's library offers (read once, after `__init__`)."""

    @property
    def catalog(self) -> PathCatalog:
        """The kind's own paths (`own_paths()`) and any `--path` / `--vs` / `--vs-env` ones added to it."""
        if "_catalog" not in self.__dict__:
            self._catalog = PathCatalog(self.name, self.own_paths())
        return self._catalog

    @property
    def path_names(self) -> tuple[str, ...]:
        return self.catalog.names

    @property
    def own_path_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.own_paths())

    @abstractmethod
    def describe(self) -> dict[str, str]:
        """Facts shown to the user before the run (algorithm, env, module, explore, ...)."""

    @abstractmethod
    def default_seeds(self, episodes: int | None) -> tuple[SeedBlock, str]:
        """A seed block training seeding does not use, and one line saying why it is held out."""

    def sweep_path(self) -> tuple[str, str]:
        """The path a sweep runs on every checkpoint of this kind, and why that one."""
        return self.default_paths[1], "the kind's deployment path"

    def default_explore(self, path_name: str) -> bool:
        """What the path's library does by default."""
        return self.catalog[path_name].default_explore()

    def explore_source(self, path_name: str) -> str:
        """Where the path's default explore setting comes from."""
        return self.catalog[path_name].explore_source

    def build_path(self, name: str, explore: bool) -> InferencePath:
        """Load and return the named path (heavy: restores the policy)."""
        return self.catalog[name].build(explore)

    def num_envs(self, name: str) -> tuple[int, str] | None:
        """Envs the path steps together and where that number comes from, if the kind says."""
        envs = self.catalog[name].envs
        return envs() if envs is not None else None

    def scales_itself(self, name: str) -> bool:
        """True when the path spreads over Ray its own library's way (`--workers`); other paths run in
        tui-eval's actors (tui_eval/cluster)."""
        return self.catalog[name].scales_itself

    def single_env_factory(self) -> Callable[[], Any]:
        """One Gymnasium env of the kind's env, as the user's own loop would make it (for `--path`)."""
        env_id = getattr(self, "env_id", None)
        if not env_id:
            raise BadInput(f"a custom path needs a Gymnasium env, but the {self.name} checkpoint names none; "
                           "pass --env ID")
        import gymnasium as gym

        from tui_eval.envs.guard import check_env_id

        check_env_id(env_id)
        config = dict(getattr(self, "env_config", {}) or {})
        return lambda: gym.make(env_id, **config)

    def custom_path(self, **kwargs: Any) -> CustomPath:
        """A `--path` loop or policy (`kwargs`: CustomPath's but `make_env`) on this kind's env: a CustomPath on
        one Gymnasium env of `single_env_factory`; a kind whose env is of another sort builds its own."""
        from tui_eval.paths.custom import CustomPath

        return CustomPath(make_env=self.single_env_factory(), library=self.library_parts, **kwargs)

    def seed_check(self) -> SeedCheck:
        """Whether the kind's env is a function of its reset seed (an exact comparison rests on it); not
        checked for an env from a factory of vector envs."""
        try:
            make_env = self.single_env_factory()
        except BadInput:
            return NOT_CHECKED
        return check_seed_repeat(make_env, self.env_id or "the env")

    def on_other_env(self, spec: RunSpec) -> CheckpointKind:
        """A copy of this kind whose paths run on `--vs-env` / `--vs-env-config`'s env, or the second env an option
        of the kind's own names (sim-to-sim parity, tui_eval/kinds/vs_env.py)."""
        raise BadInput(f"--vs-env is not available for {self.name} checkpoints")

    def other_env_option(self, spec: RunSpec) -> str | None:
        """The kind's own option that names a second env, as the label of its paths ("--vs-vecenv m:f"); None when
        the kind has none or it was not given."""
        return None

    def check_vs(self, other: CheckpointKind) -> None:
        """Raise BadInput (one line) when `other`, the `--vs` baseline (a kind of the same name), cannot be
        compared with this checkpoint."""

    def copy(self) -> CheckpointKind:
        """A shallow copy with its own catalog (the copy's paths build from the copy)."""
        other = copy.copy(self)
        other.__dict__.pop("_catalog", None)
        return other

    def reference_weights(self) -> dict[str, Any] | None:
        """The policy's weights as the checkpoint holds them, for the doctor to compare built paths against
        (None: the kind cannot read them apart from a path)."""
        return None

    def saved_connector_states(self) -> dict[str, Any]:
        """The checkpoint's saved connector states, for the doctor ({}: the kind has none)."""
        return {}

    def needs_run_process(self, name: str) -> bool:
        """Path `name` must run in the run's own process (what it needs is started there before an app takes
        the terminal: RLlib's evaluate needs the run's local Ray); other paths get a process of their own."""
        return False

    def prepare_process(self, paths: list[str]) -> None:
        """Process-wide set-up the named paths need, done before any UI takes over stdin/stdout."""

    def deploy_contract(self) -> Any:
        """The deployment contract of the export the run deploys, checked against the env
        (tui_eval/envs/contract.py: a `Contract`), or None where the kind's exports carry none."""
        return None

    def probe_fix(self, probe: str) -> str | None:
        """The fix, in this kind's library's own terms, for the deployment mistake the doctor's probe `probe` (its
        name: "observation normalizer missing", "actions clipped differently", "action not unsquashed", ...)
        proved; `{sus}` and `{ref}` name the paths. None: the probe's own fix, which names no library."""
        return None

    def default_return_bounds(self) -> tuple[float, float, str] | None:
        """Known bounds on an episode's return and where they come from, if the env allows knowing them."""
        return None
