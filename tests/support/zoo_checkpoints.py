"""One tiny real checkpoint per RLlib algorithm of the new API stack, trained for one iteration:

    python zoo_checkpoints.py OUT_DIR [NAME ... | all]

Each lands in OUT_DIR/NAME (NAME: one of ALGORITHMS, EXTRA or OFFLINE; the algorithms by default; `all`: every one).
APPO and SAC act on Pendulum (continuous actions), the others on CartPole. Nets of 16 units,
batches of a few dozen steps, no remote runners: each trains in a few seconds. Run in a subprocess
(ray.init, training) so that the test process only restores them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ray
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

TINY = DefaultModelConfig(fcnet_hiddens=[16], head_fcnet_hiddens=[16])
REPLAY = {"type": "EpisodeReplayBuffer", "capacity": 2000}


def _common(config, env: str):
    return (config.environment(env)
            .env_runners(num_env_runners=0, num_envs_per_env_runner=2)
            .learners(num_learners=0)
            .rl_module(model_config=TINY)
            .reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=64)
            .debugging(seed=5))


def ppo():
    from ray.rllib.algorithms.ppo import PPOConfig

    return _common(PPOConfig(), "CartPole-v1").training(train_batch_size_per_learner=128, minibatch_size=64,
                                                        num_epochs=1)


def appo():
    from ray.rllib.algorithms.appo import APPOConfig

    return _common(APPOConfig(), "Pendulum-v1").training(train_batch_size_per_learner=64)


def impala():
    from ray.rllib.algorithms.impala import IMPALAConfig

    return _common(IMPALAConfig(), "CartPole-v1").training(train_batch_size_per_learner=64)


def dqn():
    from ray.rllib.algorithms.dqn import DQNConfig

    return _common(DQNConfig(), "CartPole-v1").training(
        train_batch_size_per_learner=32, num_steps_sampled_before_learning_starts=32, replay_buffer_config=REPLAY)


def sac():
    from ray.rllib.algorithms.sac import SACConfig

    return _common(SACConfig(), "Pendulum-v1").training(
        train_batch_size_per_learner=32, num_steps_sampled_before_learning_starts=32, replay_buffer_config=REPLAY)


def multi_agent():
    """RLlib's MultiAgentCartPole: three agents, two modules, the user's lambda as policy_mapping_fn
    (tests/support/user_project/my_marl_project.py)."""
    sys.path.insert(0, str(Path(__file__).parent / "user_project"))
    import my_marl_project as user

    return (ppo().environment(user.ENV, env_config=user.ENV_CONFIG)
            .multi_agent(policies=user.POLICIES, policy_mapping_fn=user.policy_mapping_fn))


def multi_agent_baseline():
    """The same multi-agent setup from another seed (other initial weights): a `--vs` baseline."""
    return multi_agent().debugging(seed=6)


def multi_agent_lstm():
    """The same multi-agent setup with LSTM modules (each agent's module holds a recurrent state)."""
    lstm = DefaultModelConfig(fcnet_hiddens=[16], head_fcnet_hiddens=[16], use_lstm=True, lstm_cell_size=8,
                              max_seq_len=8)
    return multi_agent().rl_module(model_config=lstm)


def mean_std_filter(env, spaces, device):
    """RLlib's mean_std_filtering example's env-to-module connector for several agents (one filter per agent)."""
    from ray.rllib.connectors.env_to_module import MeanStdFilter

    return MeanStdFilter(multi_agent=True)


def multi_agent_filter():
    """The multi-agent checkpoint with a MeanStdFilter (statistics of one training iteration per agent)."""
    return multi_agent().env_runners(env_to_module_connector=mean_std_filter)


def own_evaluation(algorithm, eval_workers):
    """A user's own evaluation function (what Algorithm.evaluate() then runs instead of sampling)."""
    return {}, 0, 0


def custom_evaluation():
    return ppo().evaluation(custom_evaluation_function=own_evaluation)


def custom_env_runner():
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    class OwnEnvRunner(SingleAgentEnvRunner):
        """A user's own EnvRunner class (it may step envs as it likes)."""

    return ppo().env_runners(env_runner_cls=OwnEnvRunner)


def _random_rows(out: Path, env_id: str, episodes: int = 10) -> Path:
    """Transitions of a random policy in RLlib's columnar offline format (one parquet file).
    (RLlib's own offline output needs msgpack_numpy, which ray[rllib] does not install.)"""
    import gymnasium as gym
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    env = gym.make(env_id, max_episode_steps=50)
    env.action_space.seed(0)
    rows: dict[str, list] = {k: [] for k in ("obs", "new_obs", "actions", "rewards", "terminateds", "truncateds",
                                             "eps_id")}
    for episode in range(episodes):
        obs, _ = env.reset(seed=episode)
        done = False
        while not done:
            action = env.action_space.sample()
            new_obs, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            for key, value in zip(rows, (obs.tolist(), new_obs.tolist(), np.asarray(action).tolist(), float(reward),
                                         terminated, truncated, episode)):
                rows[key].append(value)
            obs = new_obs
    folder = out / f"rows_{env_id}"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(rows), folder / "part.parquet")
    return folder


def _offline(config, env: str, out: Path):
    """An offline algorithm on recorded random rows, with an evaluation env (so that the checkpoint keeps its
    evaluation EnvRunner). Built and saved without a training step: Ray Data takes tens of seconds to run one,
    and what the paths replicate (module, pipelines, evaluation settings) does not depend on the weights."""
    return (_common(config, env)
            .offline_data(input_=[str(_random_rows(out, env))], dataset_num_iters_per_learner=1,
                          map_batches_kwargs={"concurrency": 1, "num_cpus": 1},
                          iter_batches_kwargs={"prefetch_batches": 1})
            .evaluation(evaluation_interval=1, evaluation_num_env_runners=0, evaluation_duration=2))


def bc(out: Path):
    from ray.rllib.algorithms.bc import BCConfig

    return _offline(BCConfig(), "CartPole-v1", out)


def marwil(out: Path):
    from ray.rllib.algorithms.marwil import MARWILConfig

    return _offline(MARWILConfig(), "CartPole-v1", out)


def cql(out: Path):
    from ray.rllib.algorithms.cql import CQLConfig

    config = CQLConfig().training(lr=None, actor_lr=1e-3, critic_lr=1e-3, alpha_lr=1e-3,
                                  train_batch_size_per_learner=64)
    return _offline(config, "Pendulum-v1", out)


ALGORITHMS = {"ppo": ppo, "appo": appo, "impala": impala, "dqn": dqn, "sac": sac}
#: checkpoints with a feature a path cannot replicate (refused up front), and multi-agent ones
EXTRA = {"multi_agent": multi_agent, "multi_agent_baseline": multi_agent_baseline, "multi_agent_lstm": multi_agent_lstm,
         "multi_agent_filter": multi_agent_filter, "custom_evaluation": custom_evaluation,
         "custom_env_runner": custom_env_runner}
#: offline algorithms, built and saved untrained; each recipe takes the output folder
OFFLINE = {"bc": bc, "marwil": marwil, "cql": cql}


def save(config, out: Path, train: bool = True) -> None:
    algo = config.build_algo()
    if train:
        algo.train()
    algo.save(str(out.resolve()))
    algo.stop()


def main(out: Path, names: list[str]) -> None:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    every = [*ALGORITHMS, *EXTRA, *OFFLINE]
    for name in every if names == ["all"] else names or list(ALGORITHMS):
        config = OFFLINE[name](out) if name in OFFLINE else {**ALGORITHMS, **EXTRA}[name]()
        save(config, out / name, train=name not in OFFLINE)
        print("saved" if name in OFFLINE else "trained", name, flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), sys.argv[2:])
