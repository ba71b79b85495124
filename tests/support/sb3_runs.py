"""Tiny Stable-Baselines3 models trained for the tests in seconds, saved by SB3's own save functions.

- `train_ppo_cartpole(folder)`: a PPO on CartPole-v1 (Discrete actions), saved by `model.save()` alone: a plain
  model zip, which does not say its env (the kind needs `--env`).
- `train_sac_zoo(logs)`: a SAC on Pendulum-v1 (Box actions) behind VecNormalize, in an rl-zoo3-shaped run folder
  `logs/sac/Pendulum-v1_1/`: the final `Pendulum-v1.zip`, a numbered `rl_model_<N>_steps.zip` (SB3's
  CheckpointCallback), `Pendulum-v1/vecnormalize.pkl` (`VecNormalize.save`) and `config.yml` / `args.yml`
  dumped as rl-zoo3's ExperimentManager dumps them (`yaml.dump` of an OrderedDict).
- `train_plain(algo, env_id, folder)`: an A2C, DQN or TD3 (or PPO) of a few hundred steps, saved by `model.save()`.
- `train_ppo_pendulum_past_bounds(folder)`: a PPO on Pendulum-v1 whose Gaussian mean goes past the action bounds
  (±2), as a trained Pendulum PPO's does: a few PPO updates, then its mean fitted to a bang-bang swing-up
  controller of amplitude 3.5 (a second of supervised training; PPO alone needs minutes to get there).
- `export_onnx(...)`: SB3's documented ONNX recipe (`torch.onnx.export(..., opset_version=17, dynamo=False)`),
  optionally with the VecNormalize statistics and the action unscaling baked in: the faithful export a careful
  user writes, or one that forgot the normalizer.
"""

from __future__ import annotations

import contextlib
import pickle
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
import yaml

ZOO_ENV = "Pendulum-v1"
TRAINING_SEED = 3


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Train on one torch thread: on a shared machine, more threads make SAC's small updates ten times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def train_ppo_cartpole(folder: Path) -> Path:
    """A PPO on CartPole-v1 (a few hundred steps), saved as `folder/ppo_cartpole.zip`."""
    from stable_baselines3 import PPO

    folder.mkdir(parents=True, exist_ok=True)
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=128, batch_size=64, n_epochs=2, seed=TRAINING_SEED,
                policy_kwargs={"net_arch": [16]}, device="cpu", verbose=0)
    with _one_thread():
        model.learn(256)
    model.save(folder / "ppo_cartpole")
    return folder / "ppo_cartpole.zip"


def train_sac_zoo(logs: Path, steps: int = 120) -> Path:
    """A SAC on Pendulum-v1 behind VecNormalize, saved as an rl-zoo3 run folder; returns the folder."""
    from stable_baselines3 import SAC
    from stable_baselines3.common.callbacks import CheckpointCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    run = logs / "sac" / f"{ZOO_ENV}_1"
    stats = run / ZOO_ENV
    stats.mkdir(parents=True, exist_ok=True)
    env = VecNormalize(make_vec_env(ZOO_ENV, n_envs=1, seed=TRAINING_SEED), gamma=0.99)
    model = SAC("MlpPolicy", env, learning_starts=50, batch_size=32, seed=TRAINING_SEED, device="cpu",
                policy_kwargs={"net_arch": [32, 32]}, verbose=0)
    with _one_thread():
        model.learn(steps, callback=CheckpointCallback(save_freq=steps // 2, save_path=str(run),
                                                       name_prefix="rl_model"))
    model.save(run / ZOO_ENV)
    env.save(str(stats / "vecnormalize.pkl"))
    hyperparams = {"learning_starts": 50, "batch_size": 32, "n_timesteps": steps, "policy": "MlpPolicy",
                   "policy_kwargs": "dict(net_arch=[32, 32])", "normalize": True}
    args = {"algo": "sac", "env": ZOO_ENV, "seed": TRAINING_SEED, "n_timesteps": steps, "env_kwargs": None,
            "log_folder": str(logs), "eval_freq": 25000, "n_eval_envs": 5}
    for name, data in (("config.yml", hyperparams), ("args.yml", args)):
        with (stats / name).open("w") as fh:  # as rl-zoo3's ExperimentManager: OrderedDict, sorted keys
            yaml.dump(OrderedDict((k, data[k]) for k in sorted(data)), fh)
    return run


#: small settings that let each algorithm learn something in a few hundred steps on one core
SMALL = {
    "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 2},
    "a2c": {"n_steps": 8},
    "dqn": {"learning_starts": 100, "batch_size": 32, "buffer_size": 1_000, "train_freq": 4},
    "td3": {"learning_starts": 50, "batch_size": 32},
}


def train_plain(algo: str, env_id: str, folder: Path, steps: int = 256) -> Path:
    """An SB3 `algo` on `env_id` for `steps` steps, saved by `model.save()` as `folder/<algo>_<env>.zip`."""
    import stable_baselines3 as sb3

    folder.mkdir(parents=True, exist_ok=True)
    model = getattr(sb3, algo.upper())("MlpPolicy", env_id, seed=TRAINING_SEED, device="cpu", verbose=0,
                                       policy_kwargs={"net_arch": [16]}, **SMALL[algo])
    with _one_thread():
        model.learn(steps)
    target = folder / f"{algo}_{env_id.split('-')[0].lower()}"
    model.save(target)
    return target.with_suffix(".zip")


def _swing_up(obs: torch.Tensor) -> torch.Tensor:
    """Torque along the angular velocity, 3.5 in size: past Pendulum's ±2 on every step."""
    return 3.5 * torch.where(obs[:, 2:3] >= 0, 1.0, -1.0)


def train_ppo_pendulum_past_bounds(folder: Path) -> Path:
    """A PPO on Pendulum-v1 whose deterministic action (the Gaussian mean) lies past ±2, saved by model.save()."""
    from stable_baselines3 import PPO

    folder.mkdir(parents=True, exist_ok=True)
    model = PPO("MlpPolicy", ZOO_ENV, n_steps=128, batch_size=64, n_epochs=2, seed=TRAINING_SEED, device="cpu",
                policy_kwargs={"net_arch": [32]}, verbose=0)
    policy = model.policy
    with _one_thread():
        model.learn(128)
        generator = torch.Generator().manual_seed(TRAINING_SEED)
        high = torch.tensor([1.0, 1.0, 8.0])
        optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
        for _ in range(300):  # the mean fitted to the controller on observations drawn over the whole space
            obs = (torch.rand((256, 3), generator=generator) * 2 - 1) * high
            mean = policy.action_net(policy.mlp_extractor.forward_actor(policy.extract_features(obs)))
            loss = torch.mean((mean - _swing_up(obs)) ** 2)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    target = folder / "ppo_pendulum"
    model.save(target)
    return target.with_suffix(".zip")


class _Deployed(torch.nn.Module):
    """SB3's recipe for an off-policy actor (SAC: `policy.actor(obs, deterministic=True)`, TD3: `policy.actor(obs)`),
    with the optional extras a careful user adds: VecNormalize's observation normalization and the action
    unscaling `predict` does."""

    def __init__(self, actor, stats: tuple[np.ndarray, np.ndarray, float] | None, space: gym.spaces.Box | None):
        super().__init__()
        self.actor = actor
        self.stats = stats
        self.space = space
        self.sac = "sac" in type(actor).__module__

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if self.stats is not None:
            mean, std, clip = self.stats
            obs = torch.clamp((obs - torch.as_tensor(mean, dtype=torch.float32))
                              / torch.as_tensor(std, dtype=torch.float32), -clip, clip)
        action = self.actor(obs, deterministic=True) if self.sac else self.actor(obs)
        if self.space is not None:
            low = torch.as_tensor(self.space.low, dtype=torch.float32)
            high = torch.as_tensor(self.space.high, dtype=torch.float32)
            action = low + 0.5 * (action + 1.0) * (high - low)
        return action


def export_onnx(model_zip: Path, target: Path, vecnormalize: Path | None = None, unscale: bool = False,
                algo: str = "sac") -> Path:
    """The SAC or TD3 model's actor as ONNX, by SB3's recipe; with the statistics of `vecnormalize` and the
    unscaling baked in when given."""
    import stable_baselines3 as sb3

    model = getattr(sb3, algo.upper()).load(model_zip, device="cpu", buffer_size=1)
    stats = None
    if vecnormalize is not None:
        with vecnormalize.open("rb") as fh:
            norm = pickle.load(fh)
        stats = (norm.obs_rms.mean, np.sqrt(norm.obs_rms.var + norm.epsilon), float(norm.clip_obs))
    module = _Deployed(model.policy.actor, stats, model.action_space if unscale else None).eval()
    dummy = torch.zeros((1, *model.observation_space.shape), dtype=torch.float32)
    with warnings.catch_warnings():  # the tracer warns that the statistics become constants: they are meant to
        warnings.simplefilter("ignore")
        torch.onnx.export(module, dummy, str(target), opset_version=17, dynamo=False, input_names=["input"])
    return target


def train_ppo_dict_obs(folder: Path) -> Path:
    """A PPO (MultiInputPolicy) on a CartPole of Dict observations (tests/support/sb3_dict_env.py), saved by
    model.save() as `folder/ppo_dict.zip`."""
    from stable_baselines3 import PPO

    from tests.support.sb3_dict_env import ENV_ID

    folder.mkdir(parents=True, exist_ok=True)
    model = PPO("MultiInputPolicy", gym.make(ENV_ID), n_steps=128, batch_size=64, n_epochs=2, seed=TRAINING_SEED,
                policy_kwargs={"net_arch": [16]}, device="cpu", verbose=0)
    with _one_thread():
        model.learn(256)
    model.save(folder / "ppo_dict")
    return folder / "ppo_dict.zip"
