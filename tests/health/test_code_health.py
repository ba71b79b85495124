"""Habits held by CI: ruff, mypy and import-linter are clean; modules and functions stay short.

The tools are pinned in the `test` extra; they run from the repository root with its pyproject.toml.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.jobs import MYPY

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tui_eval"
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60
# Modules allowed over the limit, each capped at its present size so that it can only shrink (none now).
MODULE_LINE_CAPS: dict[str, int] = {}


def _tool(name: str) -> str:
    """The tool installed next to this interpreter (the venv's), else the one on PATH."""
    local = Path(sys.executable).parent / name
    found = str(local) if local.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return found


def _run(*argv: str, timeout: float = 300) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{' '.join(argv)} failed:\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"


def test_ruff_is_clean():
    _run(_tool("ruff"), "check", "--no-cache", "tui_eval", "tests", "bench")


def test_mypy_is_clean(prefetcher, tmp_path):
    # run in the background from the session's start (tests/support/jobs.py)
    result, _ = prefetcher.wait(MYPY, tmp_path)
    assert result.returncode == 0, f"mypy failed:\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"


def test_import_contracts_hold():
    _run(_tool("lint-imports"), "--no-cache")


def _sources():
    return sorted(p for p in PACKAGE.rglob("*.py") if "demo_checkpoints" not in p.parts)


def test_every_registered_kind_is_held_by_the_import_contracts():
    """A kind's package (tui_eval/kinds/registry.py) stands alone and keeps its kind above its paths: the
    contracts in pyproject.toml name every library's integration the registry holds, and nothing else."""
    import tomllib

    from tui_eval.kinds.registry import plugins

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    libraries = {".".join(p.package.split(".")[:3]) for p in plugins() if p.package.startswith("tui_eval.")}
    alone = next(c for c in contracts if c["type"] == "independence")
    layered = next(c for c in contracts if c.get("containers"))
    assert set(alone["modules"]) == libraries and set(layered["containers"]) == libraries


def test_no_module_over_the_line_limit():
    too_long = {}
    for path in _sources():
        name = path.relative_to(PACKAGE).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > MODULE_LINE_CAPS.get(name, MAX_MODULE_LINES):
            too_long[name] = lines
    assert too_long == {}, f"split these modules (limit {MAX_MODULE_LINES} lines)"


def test_no_function_over_the_line_limit():
    too_long = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long[f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno} {node.name}"] = length
    assert too_long == {}, f"split these functions (limit {MAX_FUNCTION_LINES} lines)"
