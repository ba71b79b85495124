"""RLlib (ray 2.x, new API stack) checkpoints: the kind (`kind.py`) and its paths (`paths/`)."""

from pathlib import Path

from tui_eval.integrations.base import KindPlugin


def warm_imports(checkpoint: Path) -> tuple[str, ...] | None:
    """A path's heavy imports, for a checkpoint this kind opens (one holding rllib_checkpoint.json)."""
    return ("torch", "ray.rllib", "gymnasium") if (checkpoint / "rllib_checkpoint.json").exists() else None


PLUGIN = KindPlugin(name="rllib", kind="tui_eval.integrations.rllib.kind:RllibKind",
                    opens="an RLlib checkpoint directory or Tune run (it holds rllib_checkpoint.json)",
                    distributions=("ray",), order=10, warm_up=f"{__name__}:warm_imports",
                    options=f"{__name__}.options:OPTIONS")
