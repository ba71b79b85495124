"""Checkpoint kinds: which library wrote a checkpoint. Each kind is a package that registers a `KindPlugin`
(tui_eval/kinds/registry.py); its kind declares its paths in its catalog. Nothing here names a library."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput
from tui_eval.integrations.base import Candidate, CheckpointKind
from tui_eval.kinds.registry import check_kind_options, plugins, what_opens


def _kinds() -> Iterator[type[CheckpointKind]]:
    """The kinds in the order they are tried, each imported only when the ones before it did not recognise the
    checkpoint (rsl_rl's imports torch and tensordict, which an RLlib checkpoint need not wait for)."""
    for plugin in plugins():
        yield plugin.load()


def load_kind(spec: RunSpec) -> CheckpointKind:
    """Recognise the checkpoint at `spec.checkpoint` and read it offline."""
    path = Path(spec.checkpoint).expanduser()
    try:
        path.stat()
    except FileNotFoundError:
        raise BadInput(f"checkpoint {spec.checkpoint!r} does not exist; pass {what_opens()}") from None
    except OSError as exc:  # a name too long, a folder on the way that cannot be entered
        raise BadInput(f"checkpoint {spec.checkpoint[:200]!r} cannot be read ({exc.strerror}); pass {what_opens()}"
                       ) from None
    if not path.exists():
        raise BadInput(f"checkpoint {spec.checkpoint!r} does not exist; pass {what_opens()}")
    path = path.resolve()
    for plugin in plugins():
        kind = plugin.load()  # each imported only when the kinds before it did not recognise the checkpoint
        if kind.recognise(path):
            from tui_eval.kinds.extra import attach_extra_paths
            from tui_eval.kinds.integrity import check_files, checked_files, files_read_first
            from tui_eval.kinds.vs_env import attach_vs_env

            check_kind_options(plugin.name, spec.kind_options)
            own = kind.settings_read_first(path) if path.is_dir() else None
            check_files(files_read_first(path) if own is None else own)
            loaded = kind(path, spec)
            check_files(checked_files(loaded.checkpoint))  # a damaged file is said now, before any header or log
            # --path / --vs / --vs-env
            return attach_vs_env(attach_extra_paths(loaded, spec, load_kind), spec)
    if path.is_dir() and not any(path.iterdir()):
        raise BadInput(f"{path} is an empty directory; pass {what_opens()}")
    raise BadInput(f"{path} is not a checkpoint tui-eval knows; pass {what_opens()}")


def sweep_candidates(runs: list[str]) -> list[Candidate]:
    """Every checkpoint `runs` hold (a Tune experiment or trial, a run folder, checkpoints listed one by one), by
    the first kind that finds any in each; BadInput (one line) for one that holds none."""
    found: list[Candidate] = []
    kinds: dict[str, str] = {}  # kind -> the first run it found checkpoints in
    for run in runs:
        path = Path(run).expanduser()
        if not path.exists():
            raise BadInput(f"{run!r} does not exist; pass a training run's folder or its checkpoints")
        path = path.resolve()
        for kind in _kinds():
            held = kind.candidates(path)
            if held:
                found += held
                kinds.setdefault(kind.name, run)
                break
        else:
            raise BadInput(f"{path} holds no checkpoint tui-eval knows; pass {what_opens()}, or a folder of them")
    if len(kinds) > 1:
        raise BadInput(f"a sweep compares checkpoints of one kind; these are {', '.join(kinds)} "
                       f"({', '.join(kinds.values())})")
    unique = list({c.path: c for c in found}.values())
    if len(unique) < 2:
        raise BadInput(f"a sweep compares checkpoints, and {', '.join(runs)} holds {len(unique)}; pass a run with "
                       "two or more")
    return unique
