"""The env of an mjlab run, built as mjlab's `train` builds it, with each batch of worlds seeded by the run.

`make_env` is what a user would otherwise write as a `--vecenv` factory: the task's **training** env cfg
(`load_env_cfg(task, play=False)`: a velocity task's play cfg never ends an episode), `--env-config` overrides
(dotted field names, e.g. `{"episode_length_s": 5}`), `num_envs`, seed and device, `ManagerBasedRlEnv` and
mjlab's `RslRlVecEnvWrapper` with the agent cfg's `clip_actions`.

`MjlabVecEnv` is the rsl_rl factory env (`paths/factory_env.py`: seed S is world `S mod N` of the batch seeded
`S - S mod N`) with one thing more: mjlab's runner saves the env's `common_step_counter` (curricula read it)
and restores it on load, in the runner path's env only. Here every path's env starts every batch at the
checkpoint's counter, so that a batch seed means the same episodes on every path, whichever ran before.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from tui_eval.errors import BadInput, first_line
from tui_eval.integrations.rsl_rl.mjlab.tasks import quiet_warp
from tui_eval.integrations.rsl_rl.paths.factory_env import FactoryVecEnv
from tui_eval.integrations.rsl_rl.paths.model import quiet


def step_counter_of(infos: Any) -> int:
    """The env's `common_step_counter` that mjlab's runner saved in the checkpoint's `infos` (0 if none)."""
    state = infos.get("env_state") if isinstance(infos, dict) else None
    counter = state.get("common_step_counter") if isinstance(state, dict) else None
    return int(counter) if isinstance(counter, (int, float)) else 0


def apply_overrides(cfg: Any, overrides: dict[str, Any], task: str) -> None:
    """Set `--env-config`'s dotted fields on the env cfg (a dict level is indexed by key)."""
    for dotted, value in overrides.items():
        parts = str(dotted).split(".")
        target = cfg
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if isinstance(target, dict):
                if part not in target:
                    raise BadInput(f"--env-config {dotted}: {'.'.join(parts[:i]) or 'the cfg'} of task {task} has "
                                   f"no key {part!r} (keys: {', '.join(map(str, target))})")
                if last:
                    target[part] = value
                else:
                    target = target[part]
            elif hasattr(target, part):
                if last:
                    setattr(target, part, value)
                else:
                    target = getattr(target, part)
            else:
                fields = sorted(k for k in vars(target) if not k.startswith("_"))
                raise BadInput(f"--env-config {dotted}: {'.'.join(parts[:i]) or 'the env cfg'} of task {task} has no "
                               f"field {part!r} (fields: {', '.join(fields)})")


def make_env(num_envs: int, device: str, seed: int, env_id: str, env_config: dict[str, Any],
             agent_cfg: dict[str, Any], step_counter: int = 0, stated: dict[str, Any] | None = None) -> Any:
    """mjlab's own env for task `env_id`, as `train` builds it (see the module's docstring); with `stated` (a
    deployment contract's fields) as the `deploy` path drives it (mjlab/deploy.py)."""
    with quiet():
        quiet_warp()
        import mjlab.tasks  # noqa: F401  (fills the registry)
        from mjlab.envs import ManagerBasedRlEnv
        from mjlab.rl import RslRlVecEnvWrapper
        from mjlab.tasks.registry import load_env_cfg

        cfg = load_env_cfg(env_id, play=False)
        apply_overrides(cfg, env_config, env_id)
        cfg.scene.num_envs = int(num_envs)
        cfg.seed = int(seed)
        if stated is not None:
            from tui_eval.integrations.rsl_rl.mjlab.deploy import apply_to_cfg

            apply_to_cfg(cfg, stated)
        try:
            env = ManagerBasedRlEnv(cfg=cfg, device=device)
        except Exception as exc:  # a cfg override mjlab rejects, or a device it cannot use
            raise BadInput(f"mjlab cannot build task {env_id} with --env-config {env_config}: "
                           f"{first_line(exc)}") from None
        if stated is not None:
            from tui_eval.integrations.rsl_rl.mjlab.deploy import apply_to_env

            apply_to_env(env, stated)
        env.common_step_counter = int(step_counter)
        clip = agent_cfg.get("clip_actions")
        return RslRlVecEnvWrapper(env, clip_actions=float(clip) if clip is not None else None)


#: MuJoCo-Warp crashes when two threads step or build its envs at once: paths in one process (`--in-process`,
#: `record`, `diagnose`) take turns
_SIMULATOR = threading.RLock()


class MjlabVecEnv(FactoryVecEnv):
    """An mjlab task's worlds, one seed per batch, every batch from the checkpoint's curriculum counter."""

    def __init__(self, *, task: str, env_config: dict[str, Any], agent_cfg: dict[str, Any], num_envs: int,
                 device: str, seed: int, step_counter: int, success_key: str | None,
                 step_timeout: float | None, stated: dict[str, Any] | None = None):
        self.step_counter = int(step_counter)
        self.action_order: list[int] | None = None  # `deploy`: env action k is the policy's output action_order[k]
        self.observation_order: list[int] | None = None  # `deploy`: its actor entry k is the env's entry [k]
        self.stated = stated
        factory = functools.partial(make_env, step_counter=self.step_counter, stated=stated)
        kwargs = dict(num_envs=num_envs, device=device, seed=seed, env_id=task, env_config=dict(env_config),
                      agent_cfg=dict(agent_cfg))
        super().__init__(factory, f"mjlab {task}", kwargs, success_key=success_key, step_timeout=step_timeout)
        self.description = (f"{self.num_envs} worlds of mjlab's {task} (training cfg"
                            + (f", {env_config}" if env_config else "") + f"), one seed per batch (seed S: world "
                            f"S mod {self.num_envs} of the batch seeded S - S mod {self.num_envs})")

    def _build(self) -> Any:
        with _SIMULATOR:
            inner = super()._build()
        if self.stated is not None:  # a deploy that indexes joints by the contract's names
            from tui_eval.integrations.rsl_rl.mjlab.deploy import action_order, actuated_joints, observation_order

            self.action_order = action_order(self.stated, actuated_joints(inner.unwrapped))
            self.observation_order = observation_order(self.stated, inner.unwrapped)
        return inner

    def _as_deployed(self, obs):
        if self.observation_order is not None:
            obs["actor"] = obs["actor"][:, self.observation_order]
        return obs

    def get_observations(self):
        return self._as_deployed(super().get_observations())

    def begin(self, feed):
        return self._as_deployed(super().begin(feed))

    def step(self, actions):
        if self.action_order is not None:
            actions = actions[:, self.action_order]
        with _SIMULATOR:
            obs, rew, dones, extras = super().step(actions)
        return self._as_deployed(obs), rew, dones, extras

    def _reseed(self, seed: int) -> None:
        with _SIMULATOR:
            self.inner.unwrapped.common_step_counter = self.step_counter
            with quiet():  # mjlab prints "Setting seed" at each seed
                super()._reseed(seed)
