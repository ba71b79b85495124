"""A run's way through the code: the walk of the call graph that follows a `RunSpec` by the names it is passed under,
from `runtime/execute.py:execute(spec)`. Static (the AST): a call passes the spec on when one of its arguments is a
name that holds it; the callee is resolved through the caller's imports, its module's functions and `self` methods.
The walk lists the files it enters in order, by a call or by a return; a climb is a return into a file of a higher
layer (the import contract's order) than the file it leaves. `called` counts the entries by a call alone."""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Walk:
    entered: list[str] = field(default_factory=list)  # files, each time the walk moves into another (calls, returns)
    called: list[str] = field(default_factory=list)  # files, each time a call moves the walk into another

    @property
    def files(self) -> int:
        return len(set(self.entered))

    def climbs(self, layer_of) -> int:
        return sum(layer_of(b) < layer_of(a) for a, b in zip(self.entered, self.entered[1:]))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class Index:
    """Every function of the package, by qualified name, and each module's imported names."""

    def __init__(self, package: str = "tui_eval"):
        self.functions: dict[str, tuple[ast.FunctionDef, Path, str | None]] = {}
        self.imports: dict[str, dict[str, str]] = {}
        for path in (ROOT / package).rglob("*.py"):
            if "demo_checkpoints" in path.parts:
                continue
            module = _module_name(path)
            tree = ast.parse(path.read_text())
            names: dict[str, str] = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module:
                    base = node.module if node.level == 0 else _relative(module, node.level, node.module, path)
                    for alias in node.names:
                        names[alias.asname or alias.name] = f"{base}.{alias.name}"
            self.imports[module] = names
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    self.functions[f"{module}.{node.name}"] = (node, path, None)
                elif isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef):
                            self.functions[f"{module}.{node.name}.{item.name}"] = (item, path, f"{module}.{node.name}")

    def resolve(self, call: ast.Call, module: str, cls: str | None) -> str | None:
        func = call.func
        if isinstance(func, ast.Name):
            for name in (self.imports[module].get(func.id), f"{module}.{func.id}"):
                if name in self.functions:
                    return name
                if name and f"{name}.__init__" in self.functions:
                    return f"{name}.__init__"
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "self" and cls:
                return f"{cls}.{func.attr}" if f"{cls}.{func.attr}" in self.functions else None
            owner = self.imports[module].get(func.value.id)
            if owner and f"{owner}.{func.attr}" in self.functions:
                return f"{owner}.{func.attr}"
        return None


def _relative(module: str, level: int, name: str, path: Path) -> str:
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    return ".".join(package[: len(package) - (level - 1)] + [name])


def walk(index: Index, start: str, carrier: str = "spec") -> Walk:
    result, seen = Walk(), set()

    def visit(qualname: str, names: set[str]) -> None:
        if qualname in seen:
            return
        seen.add(qualname)
        node, path, cls = index.functions[qualname]
        file = str(path.relative_to(ROOT))
        if not result.entered or result.entered[-1] != file:
            result.entered.append(file)
            result.called.append(file)
        module = _module_name(path)
        names = names | _holders(node, names)
        for call in [n for n in ast.walk(node) if isinstance(n, ast.Call)]:
            target = index.resolve(call, module, cls)
            if target is None:
                continue
            params = [a.arg for a in index.functions[target][0].args.args]
            if params and params[0] == "self":
                params = params[1:]
            passed = {params[i] for i, arg in enumerate(call.args) if i < len(params)
                      and isinstance(arg, ast.Name) and arg.id in names}
            passed |= {k.arg for k in call.keywords if k.arg and isinstance(k.value, ast.Name) and k.value.id in names}
            if passed:
                visit(target, passed)
                if result.entered[-1] != file:
                    result.entered.append(file)

    visit(start, {carrier})
    return result


def _holders(node: ast.FunctionDef, names: set[str]) -> set[str]:
    """Names that come to hold the spec in the function: `plan = plan_run(spec)`, each name unpacked from such a
    call (`plan, engine = start(spec)`), `copy = spec`."""
    held = set(names)
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and (bound := _bound_names(stmt.targets[0])):
            value = stmt.value
            args = value.args + [k.value for k in value.keywords] if isinstance(value, ast.Call) else [value]
            if any(isinstance(a, ast.Name) and a.id in held for a in args):
                held.update(bound)
    return held - names


def _bound_names(target: ast.expr) -> list[str]:
    """The names an assignment binds: `a` of `a = ...`, `a` and `b` of `a, b = ...` (none of an attribute or item)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple):
        return [element.id for element in target.elts if isinstance(element, ast.Name)]
    return []


def layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"
                    and "containers" not in c)
    return [[m.strip() for m in layer.split("|")] for layer in contract["layers"]]


def layer_of(file: str) -> int:
    module = file.removesuffix(".py").replace("/", ".")
    for i, layer in enumerate(layers()):
        if any(module == m or module.startswith(m + ".") for m in layer):
            return i
    return len(layers())


if __name__ == "__main__":
    found = walk(Index(), "tui_eval.runtime.execute.execute")
    print(f"{found.files} files, {len(found.entered)} entries, {found.climbs(layer_of)} climbs, session.py called "
          f"into {found.called.count('tui_eval/session.py')} times")
    print("\n".join(found.entered))
