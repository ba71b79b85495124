"""The suite's own checks stay able to fail: no wait that cannot time out (`lambda: True`), no assert that accepts
by an `or` what the wait before it already established, no exit code accepted that the contract does not have
(docs/contract.md: 0, 2, 3, 4, 5, 130)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
#: the exit codes of the contract
CONTRACT_EXIT_CODES = {0, 2, 3, 4, 5, 130}
#: the helpers that poll a condition until it holds
WAITS = {"wait_until", "wait_for", "wait_screen"}


def _files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "user_project" not in p.parts)


def _name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _wait_conditions(node: ast.AST) -> list[ast.expr]:
    """The bodies of the lambdas given to the waits under `node`."""
    return [arg.body for call in ast.walk(node) if isinstance(call, ast.Call) and _name(call) in WAITS
            for arg in call.args if isinstance(arg, ast.Lambda)]


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(TESTS.parent)}:{node.lineno}"


def waits_that_cannot_time_out(path: Path, tree: ast.AST) -> list[str]:
    return [_where(path, body) for body in _wait_conditions(tree)
            if isinstance(body, ast.Constant) and body.value]


def asserts_that_restate_a_wait(path: Path, tree: ast.AST) -> list[str]:
    """An assert with an `or` one of whose sides is a condition a wait in the same function polled for: that
    side holds once the wait returned, so the assert passes whatever the other side says."""
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        waited = {ast.dump(body) for body in _wait_conditions(function)}
        for node in ast.walk(function):
            if not isinstance(node, ast.Assert):
                continue
            for either in ast.walk(node.test):
                if isinstance(either, ast.BoolOp) and isinstance(either.op, ast.Or) \
                        and any(ast.dump(side) in waited for side in either.values):
                    found.append(_where(path, node))
    return found


def _is_exit_code(node: ast.expr) -> bool:
    """`….returncode`, `….return_value`, `main(…)`, `….wait(…)`, `finish_live(…)`, `run_headless(…)`, a name with
    `code` in it: the expressions the suite compares with exit codes."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("returncode", "return_value")
    if isinstance(node, ast.Call):
        return _name(node) in ("main", "wait", "finish_live", "run_headless")
    return isinstance(node, ast.Name) and "code" in node.id


def _ints(node: ast.expr) -> list[int]:
    elements = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [e.value for e in elements if isinstance(e, ast.Constant) and type(e.value) is int]


def exit_codes_beyond_the_contract(path: Path, tree: ast.AST) -> list[str]:
    """An exit code compared with a code the contract does not have, or with several at once (`in (0, 3)`: any
    of them passes, where the test knows which one the run must give). 143 and -9 are a process ended by
    SIGTERM / SIGKILL, as the test itself ended it."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and _is_exit_code(node.left)):
            continue
        for op, right in zip(node.ops, node.comparators):
            codes = _ints(right)
            if isinstance(op, ast.In | ast.NotIn) and len(codes) > 1:
                found.append(f"{_where(path, node)}: one of {codes}")
            elif isinstance(op, ast.Eq) and codes and codes[0] not in CONTRACT_EXIT_CODES | {143, -9}:
                found.append(f"{_where(path, node)}: {codes[0]}")
    return found


CHECKS = [waits_that_cannot_time_out, asserts_that_restate_a_wait, exit_codes_beyond_the_contract]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_no_test_holds_a_check_that_cannot_fail(check):
    found = [place for path in _files() for place in check(path, ast.parse(path.read_text(), str(path)))]
    assert not found, f"{check.__name__}: {found}"


@pytest.mark.parametrize("check, source", [
    (waits_that_cannot_time_out, "def test_x():\n    wait_until(lambda: True)\n"),
    (asserts_that_restate_a_wait,
     "async def test_x(pilot):\n    await wait_for(pilot, lambda: len(p) > n + 20)\n"
     "    assert 'title' in shown or len(p) > n + 20\n"),
    (exit_codes_beyond_the_contract, "def test_x():\n    assert proc.returncode in (0, 1), proc.stderr\n"),
    (exit_codes_beyond_the_contract, "def test_x():\n    assert main(argv) in (0, 3)\n"),
    (exit_codes_beyond_the_contract, "def test_x():\n    assert proc.returncode == 1\n"),
])
def test_each_check_finds_the_weakness_it_names(check, source):
    assert len(check(TESTS / "x.py", ast.parse(source))) == 1
