"""A user's own deployment loops for the multi-agent checkpoint of my_marl_project.py, as `--path` factories:
the MultiRLModule restored from the checkpoint, each agent's module by the user's own mapping, greedy actions.

    tui-eval CKPT --path loop=my_marl_loop.py:make_loop --path policy=my_marl_loop.py:make_policy

`make_loop` (a `run_episode(env)` loop) and `make_policy` (an `act(obs)` policy) map agents as the
checkpoint's policy_mapping_fn does; `make_swapped_loop` maps every agent to the other module (agents 0 and 2
to p1, agent 1 to p0: a mapping written for another setup); `make_naive_loop` acts for every agent in each
observation, also for one whose episode ended (MultiAgentCartPole still returns its last observation).
For a checkpoint with LSTM modules, `make_recurrent_policy` keeps each agent's state and starts it afresh at
every episode; `make_carried_over_policy` forgets that reset.
"""

from __future__ import annotations

from pathlib import Path

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

MODULES = "learner_group/learner/rl_module"


def _restore(checkpoint: str, device: str):
    module = RLModule.from_checkpoint(str(Path(checkpoint) / MODULES))
    return {mid: sub.to(device).eval() for mid, sub in module.items()}


def _actions(modules: dict, obs: dict, module_of, explore: bool, device: str) -> dict:
    """One action per agent in `obs`, from the module `module_of(agent_id)` names."""
    actions = {}
    for agent_id, agent_obs in obs.items():
        module = modules[module_of(agent_id)]
        batch = {Columns.OBS: torch.as_tensor(agent_obs[None], dtype=torch.float32, device=device)}
        with torch.no_grad():
            out = module.forward_exploration(batch) if explore else module.forward_inference(batch)
        dist = module.get_inference_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
        actions[agent_id] = int((dist.sample() if explore else dist.to_deterministic().sample())[0])
    return actions


def _loop(checkpoint: str, explore: bool, device: str, module_of):
    modules = _restore(checkpoint, device)

    def run_episode(env):  # one episode on tui-eval's MultiAgentEnv
        obs, _ = env.reset()
        finished: set = set()  # agents whose episode ended act no more (their last observation still comes)
        while True:
            acting = {agent_id: o for agent_id, o in obs.items() if agent_id not in finished}
            obs, _, terminateds, truncateds, _ = env.step(_actions(modules, acting, module_of, explore, device))
            if terminateds["__all__"] or truncateds["__all__"]:
                return
            finished |= {a for flags in (terminateds, truncateds) for a, done in flags.items() if done}
    return run_episode


def make_loop(checkpoint: str, *, explore: bool, device: str):
    return _loop(checkpoint, explore, device, lambda agent_id: f"p{agent_id % 2}")


def make_swapped_loop(checkpoint: str, *, explore: bool, device: str):
    return _loop(checkpoint, explore, device, lambda agent_id: f"p{(agent_id + 1) % 2}")


def make_naive_loop(checkpoint: str, *, explore: bool, device: str):
    modules = _restore(checkpoint, device)

    def run_episode(env):
        obs, _ = env.reset()
        done = False
        while not done:
            obs, _, terminateds, truncateds, _ = env.step(_actions(modules, obs, lambda a: f"p{a % 2}", explore,
                                                                   device))
            done = terminateds["__all__"] or truncateds["__all__"]
    return run_episode


class Policy:
    """The act form: tui-eval steps the env and asks for the actions of the agents to act (not done)."""

    def __init__(self, checkpoint: str, explore: bool, device: str):
        self.modules, self.explore, self.device = _restore(checkpoint, device), explore, device

    def act(self, obs: dict) -> dict:
        return _actions(self.modules, obs, lambda agent_id: f"p{agent_id % 2}", self.explore, self.device)


def make_policy(checkpoint: str, *, explore: bool, device: str) -> Policy:
    return Policy(checkpoint, explore, device)


class RecurrentPolicy:
    """For a checkpoint with LSTM modules: each agent's recurrent state, from the module's initial state at every
    episode's start (`carry_over`: kept from the episode before, a reset forgotten); greedy actions."""

    def __init__(self, checkpoint: str, device: str, carry_over: bool = False):
        self.modules, self.device, self.carry_over = _restore(checkpoint, device), device, carry_over
        self.states: dict = {}

    def reset(self) -> None:
        if not self.carry_over:
            self.states = {}

    def act(self, obs: dict) -> dict:
        import tree

        actions = {}
        for agent_id, agent_obs in obs.items():
            module = self.modules[f"p{agent_id % 2}"]
            state = self.states.get(agent_id) or module.get_initial_state()
            batch = {Columns.OBS: torch.as_tensor(agent_obs, dtype=torch.float32, device=self.device)[None, None],
                     Columns.STATE_IN: tree.map_structure(lambda s: torch.as_tensor(s)[None], state)}
            with torch.no_grad():
                out = module.forward_inference(batch)
            self.states[agent_id] = tree.map_structure(lambda s: s[0], out[Columns.STATE_OUT])
            actions[agent_id] = int(torch.argmax(out[Columns.ACTION_DIST_INPUTS][0, 0]))
        return actions


def make_recurrent_policy(checkpoint: str, *, explore: bool, device: str) -> RecurrentPolicy:
    return RecurrentPolicy(checkpoint, device)


def make_carried_over_policy(checkpoint: str, *, explore: bool, device: str) -> RecurrentPolicy:
    return RecurrentPolicy(checkpoint, device, carry_over=True)
