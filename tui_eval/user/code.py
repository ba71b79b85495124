"""The user's own code: modules imported with `--import`, and pickles that refer to it.

RLlib checkpoints pickle the AlgorithmConfig with every class and function the user set (env
creators, callbacks, Learner subclasses, connectors). Unpickling one imports the user's modules, so
those must be importable; when one is not, the user is told which module and class the checkpoint
names and how to make it importable, never that the checkpoint is corrupt.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pickle
import sys
from pathlib import Path
from typing import Any, BinaryIO

from tui_eval.config.spec import BadInput
from tui_eval.errors import first_line
from tui_eval.user.main_guard import IMPORTED_FILES


def make_cwd_importable() -> None:
    """Put the current directory first on sys.path, as `python -m` does (a console script does not)."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def import_user_code(item: str) -> None:
    """Import a dotted module name or a `.py` file (by its stem, its folder put on sys.path, so that
    pickles naming `stem.Class` find it). Raises BadInput when it cannot be imported."""
    target = Path(item).expanduser()
    if item.endswith(".py") or target.is_file():
        if not target.is_file():
            raise BadInput(f"--import {item}: no such file; pass a .py file or a dotted module name")
        folder, name = str(target.resolve().parent), target.stem
        if folder not in sys.path:
            sys.path.insert(0, folder)
        IMPORTED_FILES.append(target.resolve())
    else:
        name = item
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise BadInput(f"--import {item}: no module named {exc.name!r}; pass a .py file or a module "
                           "importable from here (the current directory is on the path)") from None
        raise BadInput(f"--import {item}: importing it failed: {first_line(exc)}") from None
    except SystemExit as exc:  # a script that parses its own arguments exits when they are missing
        raise BadInput(f"--import {item}: importing it called sys.exit({exc.code!r}); import a module that only "
                       "defines things (put the script's own work under if __name__ == '__main__':)") from None
    except Exception as exc:  # importing the user's module runs its code
        raise BadInput(f"--import {item}: importing it raised {first_line(exc)}") from None


class _NamingUnpickler(pickle.Unpickler):
    """Remembers the (module, name) whose import failed, so the error can name it."""

    missing: tuple[str, str] | None = None

    def find_class(self, module: str, name: str) -> Any:
        try:
            return super().find_class(module, name)
        except (ImportError, AttributeError):
            self.missing = (module, name)
            raise


def load_pickle(fh: BinaryIO, what: Path) -> Any:
    """pickle.load that turns "the user's code is not importable" into a one-line BadInput."""
    unpickler = _NamingUnpickler(fh)
    try:
        return unpickler.load()
    except (ImportError, AttributeError) as exc:
        module, name = unpickler.missing or (getattr(exc, "name", None) or "?", "?")
        raise BadInput(missing_code_message(what, module, name, exc)) from None


def missing_code_message(what: Path, module: str, name: str, exc: BaseException) -> str:
    top = module.split(".")[0]
    if isinstance(exc, ModuleNotFoundError) or (isinstance(exc, ImportError) and not isinstance(exc, AttributeError)):
        return (f"{what} refers to {module}.{name}, but module {top!r} is not importable here; run from the "
                f"folder that holds it, pass --import {top} (or --import path/to/{top}.py), or add its "
                "folder to PYTHONPATH")
    return (f"{what} refers to {module}.{name}, which module {module!r} no longer defines "
            f"({first_line(exc)}); use the version of your code the checkpoint was trained with")
