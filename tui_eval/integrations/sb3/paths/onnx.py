"""Path `onnx`: the policy as it is deployed, an ONNX file run by onnxruntime on the env's raw observations.

The file is the user's export next to the model (`<model>.onnx`, else `policy.onnx`), run as it is: whatever it
holds (VecNormalize's statistics, action unscaling) is what a deployment gets. Without one, tui-eval writes one
with SB3's documented recipe (export.py) and says so. Nothing is added around the graph: no observation
normalization, no action unscaling or clipping. The action sent to the env is the graph's first output. A graph
whose batch is fixed at 1 (the recipe's dummy input) is run one row at a time. A Dict observation's parts go to
the graph's inputs of the same names (one input per key, as export.py writes them); a user's graph whose inputs
are not the keys is one line before the run (`check_dict_inputs`, called by the kind).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tui_eval.errors import BadInput, first_line
from tui_eval.integrations.sb3.paths.common import Sb3Path
from tui_eval.integrations.sb3.paths.env import EnvRecipe
from tui_eval.paths.rerun import Side, Stateless, Trace


class OnnxPath(Sb3Path):
    def __init__(self, *, name: str, file: Path, source: str, recipe: EnvRecipe, num_envs: int,
                 success_key: str | None, step_timeout: float | None):
        self.name, self.explore, self.file = name, False, file
        self.session = _session(file)
        inputs = self.session.get_inputs()
        self.input_names = [i.name for i in inputs]
        self.batch_one = bool(inputs[0].shape) and inputs[0].shape[0] == 1
        self._start_env(recipe, num_envs, success_key, step_timeout)
        self.description = f"onnxruntime on {source}, raw observations in, first output to the env, {num_envs} envs"

    def _run(self, rows: dict[str, np.ndarray]) -> np.ndarray:
        return np.asarray(self.session.run(None, rows)[0])

    def _inputs(self, obs: Any) -> dict[str, np.ndarray]:
        """The graph's inputs: the one input, or a Dict observation's parts by name."""
        if isinstance(obs, dict):
            return {name: np.asarray(obs[name], dtype=np.float32) for name in self.input_names}
        return {self.input_names[0]: np.asarray(obs, dtype=np.float32)}

    def act(self, obs: Any) -> np.ndarray:
        rows = self._inputs(obs)
        if self.batch_one:
            n = len(next(iter(rows.values())))
            return np.concatenate([self._run({k: v[i:i + 1] for k, v in rows.items()}) for i in range(n)])
        return self._run(rows)

    def one(self, obs: Any) -> np.ndarray:
        """The graph on one observation: the row it gives (an index is a 0-d array)."""
        return self._run({k: v[None] for k, v in self._inputs(obs).items()})[0]

    def stages(self, obs: Any) -> dict[str, Any]:
        action = self.one(obs)
        return {"action": action, "action_for_env": action}

    def rerun(self, trace: Trace) -> Side:
        side = Side(self.name, trace, explore=False, stateless=True, action_space=self.action_space)
        side.stepper = lambda: Stateless(self.one)
        return side


def check_dict_inputs(file: Path, keys: tuple[str, ...]) -> None:
    """BadInput (one line) unless the graph in `file` takes one input per key of a Dict observation, named by it."""
    names = [i.name for i in _session(file).get_inputs()]
    if sorted(names) != sorted(keys):
        raise BadInput(f"{file} takes inputs {names} but the model's observations are a Dict of {list(keys)}; "
                       "export one graph input per key, named by it (tui-eval's own export does so), or move "
                       f"{file.name} away to let tui-eval export")


def _session(file: Path) -> Any:
    try:
        import onnxruntime as ort
    except ImportError:
        raise BadInput("the onnx path needs onnxruntime: pip install 'tui-eval[sb3]'") from None
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1  # one small policy per step: threads cost more than they give
    try:
        return ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own error classes
        raise BadInput(f"onnxruntime cannot load {file}: {first_line(exc, 180)}") from None
