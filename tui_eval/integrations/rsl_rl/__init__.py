"""rsl_rl (rsl-rl-lib 5.x) checkpoints: the kind (`kind.py`), its paths (`paths/`) and mjlab runs (`mjlab/`)."""

import os
from pathlib import Path

from tui_eval.integrations.base import KindDemo, KindPlugin

from .run_folder import MJLAB, framework_of, run_folder_of


def warm_imports(checkpoint: Path) -> tuple[str, ...] | None:
    """A path's heavy imports, for a `model_*.pt` or a run folder holding them (mjlab's as well)."""
    folder = run_folder_of(checkpoint) if checkpoint.exists() else None
    if folder is None and not (checkpoint.suffix == ".pt" or any(checkpoint.glob("model_*.pt"))):
        return None
    if folder is not None and framework_of(folder) == MJLAB:
        os.environ.setdefault("MJLAB_WARP_QUIET", "1")  # read when mjlab is imported; Warp starts in each path
        return ("torch", "rsl_rl.runners", "gymnasium", "mjlab.tasks")
    return ("torch", "rsl_rl.runners", "gymnasium")


DEMOS = (
    KindDemo("rsl_rl", "rsl_pointgoal/model_39.pt", "rsl_rl PPO on the bundled PointGoal-v0 task: runner vs its "
             "TorchScript export", shared_folder=True),
    KindDemo("pandareach", "rsl_pandareach/model_59.pt", "rsl_rl PPO on panda-gym's PandaReach-v3, a robot arm (the "
             "robotics extra)", options=("--num-envs", "64"), needs=("panda_gym", "pybullet"),
             install="pip install 'tui-eval[robotics]' (in a checkout: pip install -e '.[robotics]')",
             shared_folder=True),
)
PLUGIN = KindPlugin(name="rsl_rl", kind="tui_eval.integrations.rsl_rl.kind:RslRlKind",
                    opens="an rsl_rl model_*.pt file", distributions=("rsl-rl-lib",), order=30,
                    warm_up=f"{__name__}:warm_imports", options=f"{__name__}.options:OPTIONS", demos=DEMOS)
