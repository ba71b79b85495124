"""Path `onnx`: the policy as it is deployed, an ONNX file run by onnxruntime on the env's raw observations.

The file is the user's export next to the model (`<model>.onnx`, else `policy.onnx`), run as it is: whatever it
holds (VecNormalize's statistics, action unscaling) is what a deployment gets. Without one, tui-eval writes one
with SB3's documented recipe (export.py) and says so. Nothing is added around the graph: no observation
normalization, no action unscaling or clipping. The action sent to the env is the graph's first output. A graph
whose batch is fixed at 1 (the recipe's dummy input) is run one row at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tui_eval.config.spec import BadInput
from tui_eval.errors import first_line
from tui_eval.integrations.sb3.paths.common import Sb3Path
from tui_eval.integrations.sb3.paths.env import EnvRecipe
from tui_eval.paths.rerun import Side, Stateless, Trace


class OnnxPath(Sb3Path):
    def __init__(self, *, name: str, file: Path, source: str, recipe: EnvRecipe, num_envs: int,
                 success_key: str | None, step_timeout: float | None):
        self.name, self.explore, self.file = name, False, file
        self.session = _session(file)
        first = self.session.get_inputs()[0]
        self.input_name = first.name
        self.batch_one = bool(first.shape) and first.shape[0] == 1
        self._start_env(recipe, num_envs, success_key, step_timeout)
        self.description = f"onnxruntime on {source}, raw observations in, first output to the env, {num_envs} envs"

    def _run(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.session.run(None, {self.input_name: x})[0])

    def act(self, obs: Any) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32)
        if self.batch_one:
            return np.concatenate([self._run(x[i:i + 1]) for i in range(len(x))])
        return self._run(x)

    def one(self, obs: Any) -> np.ndarray:
        """The graph on one observation: the row it gives (an index is a 0-d array)."""
        return self._run(np.asarray(obs, dtype=np.float32)[None])[0]

    def stages(self, obs: Any) -> dict[str, Any]:
        action = self.one(obs)
        return {"action": action, "action_for_env": action}

    def rerun(self, trace: Trace) -> Side:
        side = Side(self.name, trace, explore=False, stateless=True, action_space=self.action_space)
        side.stepper = lambda: Stateless(self.one)
        return side


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
