"""mjlab (rsl_rl on MuJoCo-Warp, with Isaac Lab's manager-based API) as a home of rsl_rl checkpoints.

An mjlab run folder (`logs/rsl_rl/<experiment>/<run>/`, as mjlab's `train` writes it) opens as it is: the kind
(`kind.py`) recognises it (`run_folder.py`), checks the task against mjlab's registry (`tasks.py`), builds the
env as mjlab's `train` does (`env.py`) and runs mjlab's own runner class and its `<run>.onnx`. Nothing of mjlab
is imported unless the run is an mjlab run.
"""
