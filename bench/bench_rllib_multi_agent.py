"""Throughput of the multi-agent RLlib paths, as ratios taken in one run (the zoo's two-policy MultiAgentCartPole).

    PYTHONHASHSEED=1 python -m tests.support.zoo_checkpoints DIR multi_agent     # once: the checkpoint
    python bench/bench_rllib_multi_agent.py --checkpoint DIR/multi_agent [--num-envs 8] [--episodes 60]
        [--rounds 3] [--only a,b] [--cpu-time]

--cpu-time times each contender by this process's CPU time instead of the wall clock (see bench_rllib.py);
not for evaluate / plain, whose Ray processes are left out of it.

Contenders, all on the same envs count, explore off (discrete actions: greedy = argmax):
  bare        the same vector env (guarded sub-envs, RLlib's make_vec), one forward per module per step over the
              rows of the agents mapped to it, argmax, no episodes, no pipelines (a recurrent module: each
              agent's state carried by the loop itself, from the initial state at an episode's start)
  connectors  tui-eval's multi-agent `connectors` path as it runs (RLlib's stock pieces batched where provably
              the same)
  rllib-pieces  the same step by step with every piece RLlib's own, none batched (the reference)
  envrunner   RLlib's own MultiAgentEnvRunner.sample(num_episodes=N, explore=False) on the restored module and
              connectors and the same guarded envs: what RLlib's pipelines and episodes cost in RLlib itself
  evaluate    tui-eval's multi-agent `evaluate` path (Algorithm.evaluate() on a local MultiAgentEnvRunner),
              every one of the N seeds run to its end
  plain       a plain Algorithm.evaluate() of the same number of episodes on the same envs count (it stops at
              the first N episodes to finish)
Steps are env steps of finished episodes, for every contender.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
warnings.filterwarnings("ignore")
from tui_eval.local_ray import prepare_environment  # noqa: E402

prepare_environment()

from bench_rllib import SEED0, path_runner, plain_evaluate  # noqa: E402
from common import ListFeed, interleaved, rllib_bench_options, run_title  # noqa: E402

ALL = "__all__"


def bare_loop(kind, num_envs: int, episodes: int):
    import numpy as np
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

    from tui_eval.doctor.multi_agent_replay import checkpoint_mapping
    from tui_eval.integrations.rllib.paths.layout import MODULES_DIR
    from tui_eval.integrations.rllib.paths.multi_agent_env import MultiAgentGuardedEnv
    from tui_eval.integrations.rllib.paths.multi_agent_loop import make_multi_agent_vec

    module = RLModule.from_checkpoint(str(kind.checkpoint / MODULES_DIR))
    module.foreach_module(lambda mid, sub: sub.eval())
    feed = ListFeed(range(SEED0, 2**31))
    recipe = kind.env
    env = make_multi_agent_vec(lambda: MultiAgentGuardedEnv(recipe.make_one(recipe.context(), env_checker=False),
                                                            feed=feed), num_envs)
    mapping = checkpoint_mapping(kind.config.policy_mapping_fn, env.envs[0].unwrapped.possible_agents)

    initial = {mid: sub.get_initial_state() for mid, sub in module._rl_modules.items() if sub.is_stateful()}
    states: dict[tuple, dict] = {}  # (sub-env, agent) -> its recurrent state (an episode's start: none yet)

    def forward(mid: str, keys: list, batch):
        """A recurrent module gets a time axis of one and its agents' state rows."""
        if mid not in initial:
            return module[mid]._forward_inference({Columns.OBS: batch})[Columns.ACTION_DIST_INPUTS]
        state_in = {k: torch.stack([states.get(key, initial[mid])[k] for key in keys]) for k in initial[mid]}
        out = module[mid]._forward_inference({Columns.OBS: batch.unsqueeze(1), Columns.STATE_IN: state_in})
        for j, key in enumerate(keys):
            states[key] = {k: v[j] for k, v in out[Columns.STATE_OUT].items()}
        return out[Columns.ACTION_DIST_INPUTS][:, 0]

    def act(obs: list[dict], acting: list[set]) -> list[dict]:
        rows: dict[str, list] = {}
        for i, agents in enumerate(acting):
            for agent in agents:
                rows.setdefault(mapping[agent], []).append((i, agent))
        actions: list[dict] = [{} for _ in obs]
        with torch.no_grad():
            for mid, keys in rows.items():
                logits = forward(mid, keys, torch.from_numpy(np.stack([obs[i][agent] for i, agent in keys])))
                for (i, agent), action in zip(keys, logits.argmax(-1).numpy()):
                    actions[i][agent] = action
        return actions

    def run() -> int:
        obs, _ = env.reset()
        acting = [set(o) for o in obs]
        done_episodes = steps = 0
        lengths = [0] * num_envs
        while done_episodes < episodes:
            obs, _, terminateds, truncateds, _ = env.step(act(obs, acting))
            for i in range(num_envs):
                if lengths[i] < 0:  # this step was the autoreset
                    lengths[i], acting[i] = 0, set(obs[i])
                    for key in [key for key in states if key[0] == i]:
                        del states[key]
                    continue
                lengths[i] += 1
                acting[i] = {a for a in obs[i] if not (terminateds[i].get(a) or truncateds[i].get(a))}
                if terminateds[i][ALL] or truncateds[i][ALL]:
                    steps, done_episodes, lengths[i] = steps + lengths[i], done_episodes + 1, -1
        return steps

    return run


def _bench_env_creator(env_context):
    from tui_eval.integrations.rllib.paths.multi_agent_env import MultiAgentGuardedEnv

    return MultiAgentGuardedEnv(_BENCH_ENV["recipe"].make_one(env_context, env_checker=False),
                                feed=_BENCH_ENV["feed"])


_BENCH_ENV: dict = {}


def env_runner_sample(kind, num_envs: int, episodes: int):
    """MultiAgentEnvRunner built from the checkpoint's config, its connectors and modules restored."""
    from ray.rllib.core.rl_module.rl_module import RLModule
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.tune.registry import register_env

    from tui_eval.integrations.rllib.paths.layout import MODULES_DIR

    _BENCH_ENV.update(recipe=kind.env, feed=ListFeed(range(SEED0, 2**31)))
    register_env("tui_eval_bench_guarded_multi_agent", _bench_env_creator)
    config = (kind.config.copy(copy_frozen=False).environment("tui_eval_bench_guarded_multi_agent", env_config={},
                                                              disable_env_checking=True)
              .env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs, explore=False))
    runner = MultiAgentEnvRunner(config=config)
    runner.restore_from_path(str(kind.checkpoint / "env_runner"))
    runner.module.set_state(RLModule.from_checkpoint(str(kind.checkpoint / MODULES_DIR)).get_state(
        inference_only=True))

    def run() -> int:
        steps = sum(len(e) for e in runner.sample(num_episodes=episodes, explore=False))
        runner.get_metrics()  # as evaluate() reads them after each call
        return steps

    return run


def rllib_pieces_path(kind, num_envs: int):
    """The multi-agent `connectors` path with RLlib's pieces only (none batched)."""
    from tui_eval.integrations.rllib.paths.multi_agent_connectors import RllibMultiAgentConnectorsPath

    return RllibMultiAgentConnectorsPath(
        checkpoint=kind.checkpoint, module_ids=kind.module_ids, view=None, mapping_fn=kind.config.policy_mapping_fn,
        recipe=kind.env, num_envs=num_envs, device="cpu", explore=False, success_key=None, step_timeout=None,
        rllib_pieces=True)


def measure(checkpoint: Path, num_envs: int, episodes: int, rounds: int, only: set[str] | None = None,
            cpu_time: bool = False) -> dict[str, float]:
    from tui_eval.config.spec import RunSpec
    from tui_eval.integrations.rllib.kind import RllibKind
    from tui_eval.session import share_cpu_threads

    share_cpu_threads(paths=2)  # as in a run of two paths; the same for every contender
    kind = RllibKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=num_envs))
    makers = {  # built only when measured
        "bare": lambda: bare_loop(kind, num_envs, episodes),
        "connectors": lambda: path_runner(kind.build_path("connectors", explore=False), episodes),
        "rllib-pieces": lambda: path_runner(rllib_pieces_path(kind, num_envs), episodes),
        "envrunner": lambda: env_runner_sample(kind, num_envs, episodes),
        "evaluate": lambda: path_runner(kind.build_path("evaluate", explore=False), episodes),
        "plain": lambda: plain_evaluate(kind, num_envs, episodes),
    }
    contenders = {name: make() for name, make in makers.items() if not only or name in only}
    path_runner(kind.build_path("connectors", explore=False), num_envs)()  # warm-up
    return interleaved(contenders, rounds=rounds, clock=time.process_time if cpu_time else time.perf_counter)


def report(title: str, rates: dict[str, float]) -> None:
    print(title)
    for name, rate in rates.items():
        print(f"  {name:<14} {rate:9.0f} env steps/s")
    ratios = [
        ("connectors", "bare", "connectors / bare"),
        ("rllib-pieces", "bare", "step by step, RLlib's pieces only / bare"),
        ("envrunner", "bare", "RLlib's MultiAgentEnvRunner.sample() / bare"),
        ("connectors", "envrunner", "connectors / MultiAgentEnvRunner.sample()"),
        ("connectors", "rllib-pieces", "connectors / RLlib's pieces only"),
        ("evaluate", "plain", "evaluate / plain Algorithm.evaluate() (every seed to its end)"),
        ("connectors", "evaluate", "connectors / evaluate"),
    ]
    for a, b, label in ratios:
        if a in rates and b in rates:
            print(f"  {label} = {rates[a] / rates[b]:.2f}x")


def main() -> None:
    args = rllib_bench_options(__doc__.splitlines()[0], episodes=60, checkpoint=None,
                               only_example="bare,connectors,envrunner")
    rates = measure(args.checkpoint.resolve(), args.num_envs, args.episodes, args.rounds, only=args.only,
                    cpu_time=args.cpu_time)
    report(run_title(args), rates)


if __name__ == "__main__":
    main()
