"""RLlib (ray 2.x, new API stack) checkpoints: the kind (`kind.py`) and its paths (`paths/`)."""

from pathlib import Path

from tui_eval.integrations.base import KindDemo, KindPlugin


def warm_imports(checkpoint: Path) -> tuple[str, ...] | None:
    """A path's heavy imports, for a checkpoint this kind opens (one holding rllib_checkpoint.json)."""
    return ("torch", "ray.rllib", "gymnasium") if (checkpoint / "rllib_checkpoint.json").exists() else None


DEMOS = (
    KindDemo("rllib", "ppo_cartpole", "RLlib PPO on CartPole-v1 (discrete actions): evaluate vs connectors (the "
             "default demo)", shared_folder=True),
    KindDemo("pendulum", "ppo_pendulum", "RLlib PPO on Pendulum-v1 (continuous actions; evaluate samples by default, "
             "so the paths differ)", shared_folder=True),
    KindDemo("lunarlander", "ppo_lunarlander", "RLlib PPO on LunarLander-v3: a pixel demo for --frames and record",
             shared_folder=True),
)
PLUGIN = KindPlugin(name="rllib", kind="tui_eval.integrations.rllib.kind:RllibKind",
                    opens="an RLlib checkpoint directory or Tune run (it holds rllib_checkpoint.json)",
                    distributions=("ray",), order=10, warm_up=f"{__name__}:warm_imports",
                    options=f"{__name__}.options:OPTIONS", demos=DEMOS,
                    loggers=("ray.rllib", "ray.tune"))
