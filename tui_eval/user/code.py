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
import signal
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

from tui_eval.errors import BadInput, first_line
from tui_eval.user.main_block import IMPORTED_FILES


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
        _import_within_limit(name, item)
    except BadInput:
        raise
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


#: how long importing one `--import` may take before the run gives up on it (a script that waits for input,
#: a server it connects to); TUI_EVAL_IMPORT_TIMEOUT_S changes it
IMPORT_TIMEOUT_S = 120.0


class _ImportTookTooLong(Exception):
    pass


def _import_within_limit(name: str, item: str) -> None:
    """Import `name`; BadInput after IMPORT_TIMEOUT_S. The working directory is the run's again afterwards: a
    module that changes it at import must not move where the run's relative paths point."""
    limit = float(os.environ.get("TUI_EVAL_IMPORT_TIMEOUT_S", IMPORT_TIMEOUT_S))
    timed = threading.current_thread() is threading.main_thread()  # signals reach the main thread only

    def too_long(signum, frame):
        raise _ImportTookTooLong

    cwd = os.getcwd()
    previous = signal.signal(signal.SIGALRM, too_long) if timed else None
    if timed:
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        importlib.import_module(name)
    except _ImportTookTooLong:
        raise BadInput(f"--import {item}: importing it took more than {limit:g}s (does it wait for input, or run "
                       "its work at import?); put that work under if __name__ == '__main__': "
                       "(TUI_EVAL_IMPORT_TIMEOUT_S=SECONDS to allow longer)") from None
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
        os.chdir(cwd)


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
