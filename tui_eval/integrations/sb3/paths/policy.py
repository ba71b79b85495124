"""Loading an SB3 model and its VecNormalize, as rl-zoo3's enjoy.py loads them.

- The model: `ALGOS[algo].load(path, device=...)`; off-policy models with `buffer_size=1` (enjoy.py does so: the
  replay buffer is not needed to act, and a large one would be allocated for nothing).
- VecNormalize: `VecNormalize.load(path, venv)` on a venv of the run's env (which checks that the statistics fit
  its observation space), then `training = False` and `norm_reward = False`, as enjoy.py sets them: the statistics
  stay those saved, and rewards are the env's own.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tui_eval.errors import BadInput, first_line

OFF_POLICY = ("dqn", "sac", "td3")


def load_model(path: Path, algo: str, device: str) -> Any:
    """The SB3 model in `path`; BadInput (one line) when SB3 cannot load it."""
    try:
        import stable_baselines3 as sb3
    except ImportError:
        raise BadInput("the sb3 kind needs Stable-Baselines3: pip install 'tui-eval[sb3]'") from None
    cls = getattr(sb3, algo.upper())
    kwargs = {"buffer_size": 1} if algo in OFF_POLICY else {}
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # SB3 prints wrapping notes when no env is given
            return cls.load(str(path), device=device, **kwargs)
    except Exception as exc:  # a zip of another SB3 version or a policy class not installed: many classes
        raise BadInput(f"Stable-Baselines3 cannot load {path} as {algo.upper()}: {first_line(exc, 180)}") from None


def load_vecnormalize(path: Path, make_env: Callable[[], Any]) -> Any:
    """The run's VecNormalize, loaded as enjoy.py loads it (not training, rewards not normalized)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    venv = DummyVecEnv([make_env])
    try:
        norm = VecNormalize.load(str(path), venv)
    except Exception as exc:  # a pickle of another version, or statistics of another observation space
        raise BadInput(f"cannot load {path} for this env: {first_line(exc, 180)}") from None
    finally:
        venv.close()
    norm.training = False
    norm.norm_reward = False
    return norm


def normalizer_stats(norm: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """VecNormalize's observation (mean, std) as it divides by them: std = sqrt(var + epsilon)."""
    rms: Any = getattr(norm, "obs_rms", None)
    if norm is None or rms is None or not getattr(norm, "norm_obs", False) or not hasattr(rms, "mean"):
        return None
    mean = np.asarray(rms.mean, dtype=np.float64).reshape(-1)
    return mean, np.sqrt(np.asarray(rms.var, dtype=np.float64).reshape(-1) + float(norm.epsilon))
