"""RLlib (ray 2.x, new API stack) checkpoints: the kind (`kind.py`) and its paths (`paths/`)."""

from tui_eval.integrations.base import KindPlugin

PLUGIN = KindPlugin(name="rllib", kind="tui_eval.integrations.rllib.kind:RllibKind",
                    opens="an RLlib checkpoint directory or Tune run (it holds rllib_checkpoint.json)",
                    distributions=("ray",), order=10)
