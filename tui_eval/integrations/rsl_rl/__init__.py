"""rsl_rl (rsl-rl-lib 5.x) checkpoints: the kind (`kind.py`), its paths (`paths/`) and mjlab runs (`mjlab/`)."""

from tui_eval.integrations.base import KindPlugin

PLUGIN = KindPlugin(name="rsl_rl", kind="tui_eval.integrations.rsl_rl.kind:RslRlKind",
                    opens="an rsl_rl model_*.pt file", distributions=("rsl-rl-lib",), order=30)
