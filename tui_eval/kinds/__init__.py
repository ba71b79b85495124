"""Checkpoint kinds: which library wrote a checkpoint. A new library is one package under
tui_eval/integrations/ (its kind declares its paths in its catalog) and one line in `_kinds()`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from tui_eval.integrations.base import CheckpointKind
from tui_eval.spec import BadInput, RunSpec


def _kinds() -> Iterator[type[CheckpointKind]]:
    """The kinds in the order they are tried, each imported only when the ones before it did not recognise the
    checkpoint: rsl_rl's imports torch and tensordict, which an RLlib checkpoint need not wait for."""
    from tui_eval.integrations.rllib.kind import RllibKind

    yield RllibKind
    from tui_eval.integrations.rsl_rl.mjlab.kind import MjlabKind

    yield MjlabKind  # an rsl_rl checkpoint in an mjlab run folder: before the plain rsl_rl kind
    from tui_eval.integrations.rsl_rl.kind import RslRlKind

    yield RslRlKind


def load_kind(spec: RunSpec) -> CheckpointKind:
    """Recognise the checkpoint at `spec.checkpoint` and read it offline."""
    path = Path(spec.checkpoint).expanduser()
    if not path.exists():
        raise BadInput(f"checkpoint {spec.checkpoint!r} does not exist; pass an RLlib checkpoint directory, "
                       "an rsl_rl model_*.pt file or an mjlab run folder")
    path = path.resolve()
    for kind in _kinds():
        if kind.recognise(path):
            from tui_eval.kinds.extra import attach_extra_paths
            from tui_eval.kinds.vs_env import attach_vs_env

            # --path / --vs / --vs-env
            return attach_vs_env(attach_extra_paths(kind(path, spec), spec, load_kind), spec)
    if path.is_dir() and not any(path.iterdir()):
        raise BadInput(f"{path} is an empty directory; pass an RLlib checkpoint directory (it holds "
                       "rllib_checkpoint.json) or an rsl_rl model_*.pt file")
    raise BadInput(f"{path} is not a checkpoint tui-eval knows (no rllib_checkpoint.json or checkpoint_* "
                   "inside, not an rsl_rl .pt file); pass an RLlib checkpoint directory or an rsl_rl model_*.pt")
