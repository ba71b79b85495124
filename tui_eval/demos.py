"""The demo checkpoints (`tui-eval demo NAME`): each kind declares its own (`KindPlugin.demos`), listed in the order
the kinds are tried; the first is the default. The built-in kinds keep theirs in the shared folder
`demo_checkpoints` (the top-level `assets/`, with the scripts that trained them); another kind ships them inside its
own package."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_eval.errors import BadInput

if TYPE_CHECKING:
    from tui_eval.integrations.base import KindDemo

SHARED_FOLDER = Path(__file__).resolve().parent / "demo_checkpoints"


@dataclass(frozen=True)
class Demo:
    """One demo as `tui-eval demo` plays it: as its kind declares it, and where its checkpoint is."""

    declared: KindDemo
    checkpoint: Path


def demos() -> dict[str, Demo]:
    """Every registered kind's demos, by name, in the order the kinds are tried."""
    from tui_eval.kinds.registry import plugins

    found: dict[str, Demo] = {}
    for plugin in plugins():
        for demo in plugin.demos:
            folder = SHARED_FOLDER if demo.shared_folder else _package_folder(plugin.package)
            if folder is not None:
                found.setdefault(demo.name, Demo(demo, folder / demo.path))
    return found


def default_demo() -> str:
    """The demo `tui-eval demo` plays without a name: the first listed."""
    listed = demos()
    if not listed:
        raise BadInput("no installed checkpoint kind ships a demo; reinstall tui-eval")
    return next(iter(listed))


def demo_checkpoint(name: str) -> Path:
    """The bundled checkpoint called `name`; BadInput for an unknown name, a demo whose modules are missing, or an
    install without the demo's files."""
    listed = demos()
    demo = listed.get(name)
    if demo is None:
        raise BadInput(f"unknown demo {name!r}; choose one of {', '.join(listed)} "
                       "(or run tui-eval CHECKPOINT on your own checkpoint)")
    missing = [m for m in demo.declared.needs if not _importable(m)]
    if missing:
        raise BadInput(f"the {name} demo needs {' and '.join(missing)}: {demo.declared.install}")
    if not demo.checkpoint.exists():
        raise BadInput(f"the demo checkpoints are missing from this install ({demo.checkpoint}); reinstall tui-eval")
    return demo.checkpoint


def demo_help() -> str:
    """`tui-eval demo --help`: its own usage, the demos, and the options it passes on."""
    listed = demos()
    width = max(map(len, listed), default=4)
    lines = ["usage: tui-eval demo [NAME] [run options]", "",
             f"A run on one of the bundled demo checkpoints (NAME: {default_demo()} unless given):", ""]
    lines += [f"  {name.ljust(width)}  {demo.declared.text}" for name, demo in listed.items()]
    lines += ["", "Every run option is passed on (tui-eval --help lists them), e.g. --headless, --episodes N, "
              "--frames, --json FILE."]
    lines += [f"{name} runs with {' '.join(demo.declared.options)} unless you give it."
              for name, demo in listed.items() if demo.declared.options]
    return "\n".join(lines)


def demo_options(name: str) -> list[str]:
    """The options demo `name` runs with before the user's own (which override them)."""
    demo = demos().get(name)
    return list(demo.declared.options) if demo is not None else []


def _package_folder(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(folders[0]) if folders else None


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules (blocked)
        return False
