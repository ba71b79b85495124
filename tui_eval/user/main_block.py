"""Scripts that register their env only when run: `register_env(...)` inside `if __name__ == "__main__":`.

RLlib's own example scripts do this (`connectors/frame_stacking.py`, `multi_agent/multi_agent_cartpole.py`): the
registration is inside the main block, next to the argument parsing its creator reads, so `--import SCRIPT` (an
import, which does not run the main block) registers nothing. tui-eval does not run the main block (it parses
arguments, trains, and its creators read those arguments); it reads the script and says where the registration is
and what to put in a module instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

#: the `--import`ed .py files, in order (tui_eval/user/code.py adds them)
IMPORTED_FILES: list[Path] = []
_REGISTER_CALLS = ("register_env", "register")


def _is_main_block(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _registered_name(call: ast.Call) -> str | None:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name not in _REGISTER_CALLS:
        return None
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("name", "id")), None)
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def registrations_under_main(script: Path) -> dict[str, int]:
    """Env names a script registers inside its `if __name__ == "__main__":` block, with the call's line."""
    try:
        tree = ast.parse(script.read_text(), filename=str(script))
    except (OSError, SyntaxError, ValueError):
        return {}
    found: dict[str, int] = {}
    for guard in (node for node in tree.body if _is_main_block(node)):
        for node in ast.walk(guard):
            if isinstance(node, ast.Call) and (name := _registered_name(node)) is not None:
                found.setdefault(name, node.lineno)
    return found


def main_block_hint(env: str) -> str | None:
    """One line for an env registered nowhere that an `--import`ed script registers only under its main block
    (`if __name__ == "__main__":`)."""
    for script in IMPORTED_FILES:
        line = registrations_under_main(script).get(env)
        if line is not None:
            return (f"env {env!r} is registered only inside `if __name__ == \"__main__\":` of {script.name} (line "
                    f"{line}), which --import does not run; put the two lines in a module of your own, `from "
                    f"ray.tune.registry import register_env` and `register_env({env!r}, your_env_creator)`, and "
                    "--import that module")
    return None
