"""The plug-in promise, measured on the sb3 kind: it is reached only through its entry point (the registry loads
`tui_eval.integrations.sb3:PLUGIN`), no module outside its package imports it or names its library, and what it
needs of the core is a hook every kind has (CheckpointKind), not a branch on its name."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "tui_eval.integrations.sb3"
#: words only the sb3 kind's own code has reason to say
ITS_TERMS = re.compile(r"\bsb3\b|stable_baselines3|stable-baselines3|VecNormalize|rl_zoo3|rl-zoo3", re.I)


def test_no_module_outside_the_sb3_package_imports_it():
    graph = grimp.build_graph("tui_eval", cache_dir=None)
    inside = {PACKAGE, *graph.find_descendants(PACKAGE)}
    importers = {m for module in inside for m in graph.find_modules_that_directly_import(module)} - inside
    assert importers == set(), importers


def test_no_module_outside_the_sb3_package_names_it_or_its_library():
    package = ROOT / Path(*PACKAGE.split("."))
    offenders = {str(p.relative_to(ROOT)): sorted(set(m.lower() for m in ITS_TERMS.findall(p.read_text())))
                 for p in (ROOT / "tui_eval").rglob("*.py")
                 if package not in p.parents and ITS_TERMS.search(p.read_text())}
    assert offenders == {}, offenders


def test_the_registry_reaches_the_sb3_kind_through_its_entry_point():
    from tui_eval.kinds.registry import GROUP, plugins

    entry = {e.name: e.value for e in importlib.metadata.entry_points(group=GROUP)}
    assert entry.get("sb3") == f"{PACKAGE}:PLUGIN", entry
    plugin = next(p for p in plugins() if p.name == "sb3")
    assert plugin.package == PACKAGE and plugin.load().__module__ == f"{PACKAGE}.kind"
