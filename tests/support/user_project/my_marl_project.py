"""A user's multi-agent RLlib setup as people write it: RLlib's MultiAgentCartPole with three agents, two
policies, and a policy_mapping_fn that is a lambda of the user's module (agents 0 and 2 share p0)."""

from ray.rllib.examples.envs.classes.multi_agent import MultiAgentCartPole

ENV, ENV_CONFIG = MultiAgentCartPole, {"num_agents": 3}
POLICIES = {"p0", "p1"}

policy_mapping_fn = lambda agent_id, episode, **kwargs: f"p{agent_id % 2}"  # noqa: E731  (as users write it)
