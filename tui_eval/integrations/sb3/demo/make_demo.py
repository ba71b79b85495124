"""Trains the sb3 kind's demo (`tui-eval demo sb3`): a SAC on Pendulum-v1 behind VecNormalize, saved as an rl-zoo3
run folder next to this file (`logs/sac/Pendulum-v1_1/`), as rl-zoo3's ExperimentManager saves one. It has no ONNX
export: the demo's `onnx` path is SB3's documented recipe, which leaves VecNormalize and the action unscaling out.

    python -m tui_eval.integrations.sb3.demo.make_demo     # about two minutes on one core
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

ENV_ID = "Pendulum-v1"
STEPS = 12_000
SEED = 7
RUN = Path(__file__).resolve().parent / "logs" / "sac" / f"{ENV_ID}_1"


def main() -> None:
    import torch
    import yaml
    from stable_baselines3 import SAC
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(1)  # small networks: more threads only slow the updates down
    stats = RUN / ENV_ID
    stats.mkdir(parents=True, exist_ok=True)
    env = VecNormalize(make_vec_env(ENV_ID, n_envs=1, seed=SEED), gamma=0.99)
    hyperparams = {"policy": "MlpPolicy", "learning_starts": 500, "batch_size": 128, "n_timesteps": STEPS,
                   "policy_kwargs": "dict(net_arch=[64, 64])", "normalize": True}
    model = SAC("MlpPolicy", env, learning_starts=500, batch_size=128, seed=SEED, device="cpu",
                policy_kwargs={"net_arch": [64, 64]}, verbose=0)
    model.learn(STEPS)
    model.save(RUN / ENV_ID, exclude=["replay_buffer"])
    env.save(str(stats / "vecnormalize.pkl"))
    args = {"algo": "sac", "env": ENV_ID, "seed": SEED, "n_timesteps": STEPS, "env_kwargs": None}
    for name, data in (("config.yml", hyperparams), ("args.yml", args)):
        with (stats / name).open("w") as fh:  # as rl-zoo3 writes them: a yaml.dump of an OrderedDict, keys sorted
            yaml.dump(OrderedDict((k, data[k]) for k in sorted(data)), fh)


if __name__ == "__main__":
    main()
