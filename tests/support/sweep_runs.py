"""Training runs for `tui-eval sweep`, each with a best checkpoint known by construction:

    python -m tests.support.sweep_runs OUT_DIR

- `tune/sweep_experiment`: a Tune experiment of RLlib's PPO on CartPole (4 iterations, a checkpoint after each,
  far too short to learn to balance); then the second checkpoint's network is set by hand to the classic rule
  (push toward where the pole falls: it balances for hundreds of steps) and the others' policy heads are
  scrambled. The second is best on any seeds, while training's own record in each checkpoint still ranks them
  as they trained.
- `rsl/`: the bundled rsl_rl PointGoal run's checkpoint as `model_20.pt`, and three of its actor's copies with
  noise in their weights as `model_10.pt`, `model_30.pt` and `model_39.pt` (the newest: what an rsl_rl user
  deploys), with a TensorBoard training curve as rsl_rl writes it (`Train/mean_reward` rising to the newest).
"""

from __future__ import annotations

import pickle
import shutil
import sys
from pathlib import Path

import numpy as np

BEST_TUNE = "checkpoint_000001"
BEST_RSL = "model_20.pt"
CURVE_START = -40.0  # the rsl run's Train/mean_reward at iteration 0, one more at each iteration


def scramble(module_state: Path, seed: int) -> None:
    state = pickle.loads(module_state.read_bytes())
    rng = np.random.default_rng(seed)
    for key in [k for k in state if k.startswith("pi.") and k.endswith("weight")]:
        state[key] = (state[key] + rng.normal(0, 2.0, state[key].shape)).astype(state[key].dtype)
    module_state.write_bytes(pickle.dumps(state))


def tune_experiment(out: Path) -> None:
    import ray
    from ray import tune
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(num_env_runners=0, num_envs_per_env_runner=2)
              .training(train_batch_size_per_learner=256, minibatch_size=128, num_epochs=1)
              .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16])).debugging(seed=3))
    tuner = tune.Tuner("PPO", param_space=config, run_config=tune.RunConfig(
        name="sweep_experiment", storage_path=str(out.resolve()), stop={"training_iteration": 4}, verbose=0,
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=1)))
    result = tuner.fit()
    assert not result.errors, result.errors
    ray.shutdown()
    for i, checkpoint in enumerate(sorted((out / "sweep_experiment").glob("*/checkpoint_*"))):
        state = checkpoint / "learner_group" / "learner" / "rl_module" / "default_policy" / "module_state.pkl"
        (balance if checkpoint.name == BEST_TUNE else scramble)(state, i)


def balance(module_state: Path, seed: int) -> None:
    """The shared encoder's first two units read the pole's angle and angular velocity (tanh(±5(θ + θ')));
    the policy head pushes right on the first, left on the second."""
    state = pickle.loads(module_state.read_bytes())
    w = np.zeros_like(state["encoder.encoder.net.mlp.0.weight"])
    w[0, 2:] = 5.0
    w[1, 2:] = -5.0
    head = np.zeros_like(state["pi.net.mlp.0.weight"])
    head[1, 0] = head[0, 1] = 1.0
    state.update({"encoder.encoder.net.mlp.0.weight": w,
                  "encoder.encoder.net.mlp.0.bias": np.zeros_like(state["encoder.encoder.net.mlp.0.bias"]),
                  "pi.net.mlp.0.weight": head, "pi.net.mlp.0.bias": np.zeros_like(state["pi.net.mlp.0.bias"])})
    module_state.write_bytes(pickle.dumps(state))


def rsl_run(out: Path, demo: Path) -> None:
    import torch

    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(demo / "params", out / "params")
    trained = torch.load(demo / "model_39.pt", weights_only=False)
    torch.save({**trained, "iter": 20}, out / BEST_RSL)
    for iteration in (10, 30, 39):
        actor = {k: v.clone() for k, v in trained["actor_state_dict"].items()}
        generator = torch.Generator().manual_seed(iteration)
        for key in [k for k in actor if k.startswith("mlp.") and k.endswith("weight")]:
            actor[key] = actor[key] + 0.5 * torch.randn(actor[key].shape, generator=generator)
        torch.save({**trained, "actor_state_dict": actor, "iter": iteration}, out / f"model_{iteration}.pt")
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=str(out), flush_secs=1)
    for iteration in range(40):
        writer.add_scalar("Train/mean_reward", CURVE_START + iteration, iteration)
    writer.close()


def main(out: Path) -> None:
    from tui_eval.demos import demo_checkpoint

    rsl_run(out / "rsl", demo_checkpoint("rsl_rl").parent)
    print("made rsl", flush=True)
    tune_experiment(out / "tune")
    print("trained tune", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
