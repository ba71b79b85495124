"""Custom paths measure episodes with tui-eval's own wrapper: seeds, returns and invalid never come from user code."""

from __future__ import annotations

import gymnasium as gym
import pytest

from tui_eval.errors import BadInput
from tui_eval.paths.custom import CustomPath, CustomSpec


class Feed:
    cancelled = False
    heartbeat = None

    def __init__(self, seeds):
        self.seeds = list(seeds)

    def take(self):
        return (self.seeds.pop(0), 0) if self.seeds else None


def run(target, seeds=(5, 6)):
    path = CustomPath(name="mine", target=target, make_env=lambda: gym.make("CartPole-v1"), explore=False,
                      success_key=None, step_timeout=None, source="test")
    records = []
    path.run(Feed(seeds), records.append)
    path.close()
    return records


def test_episode_form_gets_the_runs_seed_and_its_return_is_measured_by_tui_eval():
    seen = []

    def run_episode(env):
        obs, _ = env.reset(seed=123)  # the user's own seed is ignored
        seen.append(obs.copy())
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(0)
            done = terminated or truncated

    records = run(run_episode)
    assert [r.seed for r in records] == [5, 6] and all(not r.invalid for r in records)
    reference = gym.make("CartPole-v1")
    assert (seen[0] == reference.reset(seed=5)[0]).all()
    assert records[0].ret == records[0].length > 0


def test_act_form_is_stepped_by_tui_eval_and_an_early_return_is_invalid():
    class Policy:
        resets = 0

        def reset(self):
            Policy.resets += 1

        def act(self, obs):
            return 1

    records = run(Policy())
    assert Policy.resets == 2 and all(r.length > 0 and not r.invalid for r in records)

    def too_short(env):
        env.reset()
        env.step(0)

    short = run(too_short, seeds=[7])
    assert short[0].invalid and "returned before the episode ended" in short[0].reason


@pytest.mark.parametrize("text", ["mine", "mine=mod", "=mod:f", "mine=mod:not-an-id"])
def test_malformed_path_option_is_bad_input(text):
    with pytest.raises(BadInput, match="NAME=MODULE:FACTORY"):
        CustomSpec.parse(text)


def test_changing_explore_calls_the_factory_again():
    made = []

    def factory(explore):
        made.append(explore)
        return lambda env: None

    path = CustomPath(name="mine", target=factory(False), make_env=lambda: gym.make("CartPole-v1"), explore=False,
                      success_key=None, step_timeout=None, source="test", remake=factory)
    path.set_explore(True)
    assert made == [False, True] and path.explore
    path.close()
