"""The demo checkpoints shipped with tui-eval (`tui-eval demo NAME`). Their source is the top-level
`assets/` folder (with the scripts that trained them); the package reaches it as `demo_checkpoints`. A checkpoint
kind may ship demos of its own inside its package (`KindPlugin.demos`): they are listed and played alike."""

from __future__ import annotations

from pathlib import Path

from tui_eval.config.spec import BadInput

DEMO_ROOT = Path(__file__).resolve().parent / "demo_checkpoints"
DEMOS = {
    "rllib": "ppo_cartpole",
    "pendulum": "ppo_pendulum",
    "rsl_rl": "rsl_pointgoal/model_39.pt",
    "lunarlander": "ppo_lunarlander",
    "pandareach": "rsl_pandareach/model_59.pt",
}
#: what each demo is, for `tui-eval demo --help`
DEMO_TEXT = {
    "rllib": "RLlib PPO on CartPole-v1 (discrete actions): evaluate vs connectors (the default demo)",
    "pendulum": "RLlib PPO on Pendulum-v1 (continuous actions; evaluate samples by default, so the paths differ)",
    "rsl_rl": "rsl_rl PPO on the bundled PointGoal-v0 task: runner vs its TorchScript export",
    "lunarlander": "RLlib PPO on LunarLander-v3: a pixel demo for --frames and record",
    "pandareach": "rsl_rl PPO on panda-gym's PandaReach-v3, a robot arm (the robotics extra)",
}
#: options a demo runs with unless the command line says otherwise (it is read after them)
DEMO_OPTIONS = {"pandareach": ["--num-envs", "64"]}
#: modules a demo needs beyond tui-eval's own dependencies, and how to install them
DEMO_EXTRAS = {"pandareach": (("panda_gym", "pybullet"), "pip install 'tui-eval[robotics]' "
                              "(in a checkout: pip install -e '.[robotics]')")}


def kind_demos() -> dict[str, tuple[Path, str]]:
    """The demos the registered kinds ship in their packages: name -> (checkpoint, what it is)."""
    import importlib.util

    from tui_eval.kinds.registry import plugins

    found = {}
    for plugin in plugins():
        spec = importlib.util.find_spec(plugin.package) if plugin.demos else None
        folders = list(spec.submodule_search_locations or []) if spec is not None else []
        for demo in plugin.demos if folders else ():
            found[demo.name] = (Path(folders[0]) / demo.path, demo.text)
    return found


def demo_checkpoint(name: str) -> Path:
    """The bundled checkpoint called `name`; BadInput for an unknown name or an install without demos."""
    if name not in DEMOS:
        shipped = kind_demos()
        if name in shipped:
            return _present(shipped[name][0])
        raise BadInput(f"unknown demo {name!r}; choose one of {', '.join([*DEMOS, *shipped])} "
                       "(or run tui-eval CHECKPOINT on your own checkpoint)")
    if name in DEMO_EXTRAS:
        modules, command = DEMO_EXTRAS[name]
        missing = [m for m in modules if not _importable(m)]
        if missing:
            raise BadInput(f"the {name} demo needs {' and '.join(missing)} (the robotics extra): {command}")
    return _present(DEMO_ROOT / DEMOS[name])


def _present(path: Path) -> Path:
    if not path.exists():
        raise BadInput(f"the demo checkpoints are missing from this install ({path}); reinstall tui-eval")
    return path


def demo_help() -> str:
    """`tui-eval demo --help`: its own usage, the demos, and the options it passes on."""
    texts = {**DEMO_TEXT, **{name: text for name, (_, text) in kind_demos().items()}}
    width = max(map(len, texts))
    lines = ["usage: tui-eval demo [NAME] [run options]", "",
             "A run on one of the bundled demo checkpoints (NAME: rllib unless given):", ""]
    lines += [f"  {name.ljust(width)}  {text}" for name, text in texts.items()]
    lines += ["", "Every run option is passed on (tui-eval --help lists them), e.g. --headless, --episodes N, "
              "--frames, --json FILE."]
    lines += [f"{name} runs with {' '.join(options)} unless you give it." for name, options in DEMO_OPTIONS.items()]
    return "\n".join(lines)


def demo_options(name: str) -> list[str]:
    """The options demo `name` runs with before the user's own (which override them)."""
    return list(DEMO_OPTIONS.get(name, []))


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules (blocked)
        return False
