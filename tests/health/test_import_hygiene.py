"""The core works without the TUI: nothing outside tui_eval/ui imports Textual (as harlequin checks); the
command line starts light; no import cycle; no module imports another's private names."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
CORE = ["tui_eval.engine.core", "tui_eval.session", "tui_eval.headless", "tui_eval.stats", "tui_eval.kinds",
        "tui_eval.paths", "tui_eval.cli", "tui_eval.views.summary", "tui_eval.log.store", "tui_eval.runs",
        "tui_eval.feed", "tui_eval.ui.inbox", "tui_eval.ui.source", "tui_eval.ui.charts", "tui_eval.ui.records_export",
        "tui_eval.config.option",
        *(f"tui_eval.commands.{p.stem}" for p in sorted((ROOT / "tui_eval" / "commands").glob("[a-z]*.py")))]
HEAVY = ("ray", "torch", "gymnasium", "textual", "scipy", "numpy")


def test_core_imports_without_textual():
    code = ("import sys\n" + "".join(f"import {m}\n" for m in CORE)
            + "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
            + "assert not bad, bad[:5]\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_no_textual_import_outside_ui():
    pattern = re.compile(r"^\s*(from|import)\s+textual\b", re.M)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "tui_eval").rglob("*.py")
                 if "ui" not in p.relative_to(ROOT / "tui_eval").parts[:1] and pattern.search(p.read_text())]
    assert offenders == []
    plain_ui = ["inbox.py", "source.py", "charts.py", "records_export.py"]
    assert [n for n in plain_ui if pattern.search((ROOT / "tui_eval" / "ui" / n).read_text())] == []


def test_the_command_line_starts_without_heavy_libraries():
    """`tui-eval --help`, bad input and `ls` answer at once, and Ray's settings are made before Ray loads."""
    code = ("import sys\nimport tui_eval.cli\n"
            f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
            "assert not bad, bad[:5]\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), imports inside functions included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.find_modules_directly_imported_by(module):
            if other not in graph.modules or not other.startswith("tui_eval"):
                continue
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(m for m in graph.modules if m.startswith("tui_eval")):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle():
    graph = grimp.build_graph("tui_eval", cache_dir=None)
    assert "tui_eval.cli" in graph.modules and "tui_eval.commands.run" in graph.modules
    assert _cycles(graph) == []


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private_imports(path: Path) -> list[str]:
    """`from M import _name` (or `import M._private`) of one of our modules, in a module other than M."""
    here, package = _module_name(path), _module_name(path).rpartition(".")[0]
    if path.name == "__init__.py":
        package = here
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            if base.split(".")[0] != "tui_eval" or base == here:
                continue
            private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            private += [p for p in base.split(".") if p.startswith("_") and not p.startswith("__")]
            found += [f"{here}:{node.lineno} from {base} import {name}" for name in private]
        elif isinstance(node, ast.Import):
            found += [f"{here}:{node.lineno} import {a.name}" for a in node.names if a.name.startswith("tui_eval")
                      and any(p.startswith("_") and not p.startswith("__") for p in a.name.split("."))]
    return found


def test_no_private_name_imported_across_modules():
    files = [p for folder in ("tui_eval", "tests", "bench") for p in (ROOT / folder).rglob("*.py")
             if "user_project" not in p.parts and "demo_checkpoints" not in p.parts]
    assert len(files) > 100
    assert [hit for path in files for hit in _private_imports(path)] == []
