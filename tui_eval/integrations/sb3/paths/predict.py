"""Path `predict`: the model's own `predict()` behind its VecNormalize, as rl-zoo3's enjoy.py plays it.

Each step the batch of observations from tui-eval's envs is normalized by the run's VecNormalize (`normalize_obs`:
its saved mean and variance, clipped to ±clip_obs) and given to `model.predict(obs, deterministic=...)`, which
returns the action the env is sent: a Box action unscaled from [-1, 1] where the policy squashes (SAC, TD3), else
clipped to the action space's bounds (PPO, A2C); a Discrete action's index. `deterministic` is the opposite of
the path's explore setting (enjoy.py: deterministic, except on Atari and MiniGrid).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tui_eval.integrations.sb3.paths.common import Sb3Path
from tui_eval.integrations.sb3.paths.env import EnvRecipe
from tui_eval.integrations.sb3.paths.policy import load_model, load_vecnormalize, normalizer_stats
from tui_eval.paths.rerun import Side, Stateless, Trace


class PredictPath(Sb3Path):
    def __init__(self, *, name: str, model_path: Path, algo: str, recipe: EnvRecipe, vecnormalize: Path | None,
                 num_envs: int, explore: bool, device: str, success_key: str | None, step_timeout: float | None):
        self.name, self.explore = name, explore
        self.model = load_model(model_path, algo, device)
        self.norm = load_vecnormalize(vecnormalize, recipe.make) if vecnormalize is not None else None
        self._start_env(recipe, num_envs, success_key, step_timeout)
        normalized = "behind the run's VecNormalize (obs only)" if self.norm is not None else "no VecNormalize"
        self.description = (f"{algo.upper()}.predict(deterministic={not explore}) {normalized}, {num_envs} envs "
                            f"({model_path.name})")

    def normalize(self, obs: Any) -> Any:
        return self.norm.normalize_obs(obs) if self.norm is not None else obs

    def act(self, obs: Any) -> Any:
        actions, _ = self.model.predict(self.normalize(obs), deterministic=not self.explore)
        return actions

    def stages(self, obs: Any) -> dict[str, Any]:
        """The normalized observation (when VecNormalize is there), the policy's own action before `predict`
        unscales or clips it (deterministic only: a sample drawn twice would differ), the action sent."""
        import torch

        z = self.normalize(obs)
        out: dict[str, Any] = {}
        if self.norm is not None:
            out["env_to_module"] = np.asarray(z, dtype=float)
        if not self.explore:
            policy = self.model.policy
            tensor, _ = policy.obs_to_tensor(z)
            with torch.no_grad():
                out["action"] = policy._predict(tensor, deterministic=True).cpu().numpy()[0]
        out["action_for_env"] = self.model.predict(z, deterministic=not self.explore)[0]
        return out

    def rerun(self, trace: Trace) -> Side:
        """`predict` as a pure function of the env's observation (`stepper`) and of the normalized one (`head`);
        `stats`: VecNormalize's (mean, std), for the doctor's normalizer probes."""
        deterministic = not self.explore
        side = Side(self.name, trace, explore=self.explore, stateless=True, action_space=self.action_space)
        side.stepper = lambda: Stateless(lambda obs: self.model.predict(self.normalize(obs),
                                                                        deterministic=deterministic)[0])
        side.head = lambda z: self.model.predict(np.asarray(z, dtype=np.float32), deterministic=deterministic)[0]
        side.stats = normalizer_stats(self.norm)
        return side
