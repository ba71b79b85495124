"""Scripts that register their env only under `if __name__ == "__main__":` (RLlib's own examples do)."""

from __future__ import annotations

from pathlib import Path

import ray.rllib.examples

from tui_eval.user.main_block import registrations_under_main

EXAMPLES = Path(ray.rllib.examples.__file__).parent


def test_rllibs_own_examples_register_under_their_main_block():
    frame_stacking = registrations_under_main(EXAMPLES / "connectors" / "frame_stacking.py")
    assert set(frame_stacking) == {"atari-env"}  # two calls (multi-agent or not), one name, the first line kept
    assert registrations_under_main(EXAMPLES / "multi_agent" / "multi_agent_cartpole.py").keys() == {"env"}


def test_registrations_at_the_top_level_or_elsewhere_are_not_reported(tmp_path):
    script = tmp_path / "envs.py"
    script.write_text(
        "import gymnasium as gym\n"
        "from ray.tune.registry import register_env\n"
        "register_env('top', lambda c: None)\n"
        "def later():\n"
        "    register_env('in_a_function', lambda c: None)\n"
        "if __name__ == '__main__':\n"
        "    gym.register(id='Guarded-v0', entry_point='x:y')\n"
        "    register_env(name='guarded-by-keyword', env_creator=None)\n"
        "    register_env(NAME_FROM_A_VARIABLE, None)\n")
    assert registrations_under_main(script) == {"Guarded-v0": 7, "guarded-by-keyword": 8}
    (tmp_path / "broken.py").write_text("if __name__ == '__main__':\n  register_env('x', (\n")
    assert registrations_under_main(tmp_path / "broken.py") == {}
