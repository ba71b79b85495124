"""The demo checkpoints shipped with tui-eval (`tui-eval demo NAME`). Their source is the top-level
`assets/` folder (with the scripts that trained them); the package reaches it as `demo_checkpoints`."""

from __future__ import annotations

from pathlib import Path

from tui_eval.spec import BadInput

DEMO_ROOT = Path(__file__).resolve().parent / "demo_checkpoints"
DEMOS = {
    "rllib": "ppo_cartpole",  # RLlib PPO, CartPole-v1 (discrete actions)
    "pendulum": "ppo_pendulum",  # RLlib PPO, Pendulum-v1 (continuous actions)
    "rsl_rl": "rsl_pointgoal/model_39.pt",  # rsl_rl PPO on the bundled PointGoal-v0 task
    "lunarlander": "ppo_lunarlander",  # RLlib PPO, LunarLander-v3: a pixel demo for --frames and record
}


def demo_checkpoint(name: str) -> Path:
    """The bundled checkpoint called `name`; BadInput for an unknown name or an install without demos."""
    if name not in DEMOS:
        raise BadInput(f"unknown demo {name!r}; choose one of {', '.join(DEMOS)} "
                       "(or run tui-eval CHECKPOINT on your own checkpoint)")
    path = DEMO_ROOT / DEMOS[name]
    if not path.exists():
        raise BadInput(f"the demo checkpoints are missing from this install ({path}); reinstall tui-eval")
    return path
