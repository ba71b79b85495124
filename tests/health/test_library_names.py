"""What a library is, only its kind knows: no module outside `tui_eval/integrations/` imports the library of a
built-in kind or names one in its code (its strings: help, messages, fixes). A kind brings its options, warm-up
imports, demos, loggers, probe fixes and contract fixes through its KindPlugin and CheckpointKind hooks. Docstrings
and comments may still name a library as an example of what a hook serves."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the built-in kinds' libraries, as code would name them
LIBRARIES = re.compile(r"rllib|rsl_rl|rsl-rl|mjlab|isaac ?lab|stable.baselines3|\bsb3\b|rl.zoo3", re.I)


def _docstrings(tree: ast.AST) -> set[int]:
    bodies = [n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef |
                                                     ast.AsyncFunctionDef)]
    return {id(n.body[0].value) for n in bodies
            if n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def _named(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    docs, found = _docstrings(tree), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
            found += [f"{node.lineno}: import {n}" for n in names if LIBRARIES.search(n)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and LIBRARIES.search(node.value):
            found.append(f"{node.lineno}: {node.value[:60]!r}")
    return found


def test_no_shared_module_imports_or_names_a_kinds_library():
    shared = [p for p in (ROOT / "tui_eval").rglob("*.py") if "integrations" not in p.relative_to(ROOT).parts
              and "demo_checkpoints" not in p.parts]
    offenders = {str(p.relative_to(ROOT)): hits for p in shared if (hits := _named(p))}
    assert offenders == {}, offenders


def test_the_scan_sees_an_import_and_a_message(tmp_path):
    """The scan itself: a planted import and a planted message are found; a docstring is not."""
    planted = tmp_path / "planted.py"
    planted.write_text('"""Serves RLlib, as an example."""\nimport ray.rllib\nMESSAGE = "an rsl_rl run"\n')
    assert _named(planted) == ["2: import ray.rllib", "3: 'an rsl_rl run'"]
