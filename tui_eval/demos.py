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
    "pandareach": "rsl_pandareach/model_59.pt",  # rsl_rl PPO, panda-gym's PandaReach-v3 (the robotics extra)
}
#: options a demo runs with unless the command line says otherwise (it is read after them)
DEMO_OPTIONS = {"pandareach": ["--num-envs", "64"]}
#: modules a demo needs beyond tui-eval's own dependencies, and how to install them
DEMO_EXTRAS = {"pandareach": (("panda_gym", "pybullet"), "pip install 'tui-eval[robotics]' "
                              "(in a checkout: pip install -e '.[robotics]')")}


def demo_checkpoint(name: str) -> Path:
    """The bundled checkpoint called `name`; BadInput for an unknown name or an install without demos."""
    if name not in DEMOS:
        raise BadInput(f"unknown demo {name!r}; choose one of {', '.join(DEMOS)} "
                       "(or run tui-eval CHECKPOINT on your own checkpoint)")
    if name in DEMO_EXTRAS:
        modules, command = DEMO_EXTRAS[name]
        missing = [m for m in modules if not _importable(m)]
        if missing:
            raise BadInput(f"the {name} demo needs {' and '.join(missing)} (the robotics extra): {command}")
    path = DEMO_ROOT / DEMOS[name]
    if not path.exists():
        raise BadInput(f"the demo checkpoints are missing from this install ({path}); reinstall tui-eval")
    return path


def demo_options(name: str) -> list[str]:
    """The options demo `name` runs with before the user's own (which override them)."""
    return list(DEMO_OPTIONS.get(name, []))


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules (blocked)
        return False
