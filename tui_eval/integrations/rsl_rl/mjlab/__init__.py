"""mjlab (rsl_rl on MuJoCo-Warp, with Isaac Lab's manager-based API) as a home of rsl_rl checkpoints.

An mjlab run folder (`logs/rsl_rl/<experiment>/<run>/`, as mjlab's `train` writes it) opens as it is: the kind
(`kind.py`) recognises it (`run_folder.py`), checks the task against mjlab's registry (`tasks.py`), builds the
env as mjlab's `train` does (`env.py`) and runs mjlab's own runner class and its `<run>.onnx`. Nothing of mjlab
is imported unless the run is an mjlab run.
"""

from tui_eval.integrations.base import KindPlugin

# an rsl_rl checkpoint in an mjlab run folder: tried before the plain rsl_rl kind
PLUGIN = KindPlugin(name="mjlab", kind="tui_eval.integrations.rsl_rl.mjlab.kind:MjlabKind",
                    opens="an mjlab run folder", distributions=("rsl-rl-lib", "mjlab"), order=20)
