"""The tree stays Python 3.9 code: no runtime `X | Y` types, no zip(strict=), no match.

vermin (in .ci/run) checks the standard library and syntax; its union-type detection cannot tell
annotations (fine under `from __future__ import annotations`) from runtime unions, so this test
looks for the runtime ones itself: isinstance/issubclass/cast arguments and module-level aliases.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TREES = ("ascend_audit", "checks", "reports", "tests", "benchmarks", "examples", "deploy")
FILES = sorted(p for t in TREES if (REPO / t).is_dir() for p in (REPO / t).rglob("*.py"))


def _is_union(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr)


def _typeish(node: ast.AST) -> bool:
    """A union of names, attributes, subscripts or None: how a type union looks."""
    if _is_union(node):
        return _typeish(node.left) and _typeish(node.right)  # type: ignore[attr-defined]
    if isinstance(node, ast.Constant):
        return node.value is None
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript))


def violations(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name in ("isinstance", "issubclass") and len(node.args) == 2:
                found += [f"line {node.lineno}: {name}(…, X | Y)"] * _is_union(node.args[1])
            if name == "cast" and node.args and _is_union(node.args[0]):
                found.append(f"line {node.lineno}: cast(X | Y, …)")
            if name == "zip" and any(k.arg == "strict" for k in node.keywords):
                found.append(f"line {node.lineno}: zip(strict=) is 3.10+")
        if type(node).__name__ == "Match":
            found.append(f"line {node.lineno}: match statement is 3.10+")
    body = getattr(tree, "body", [])
    for node in body:
        if isinstance(node, ast.Assign) and _is_union(node.value) and _typeish(node.value):
            found.append(f"line {node.lineno}: runtime type alias with X | Y")
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_python310_only_constructs(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    assert violations(tree) == [], f"{path.relative_to(REPO)}: {violations(tree)}"


def test_the_scan_finds_what_it_looks_for() -> None:
    bad = "isinstance(x, int | str)\nA = int | None\nzip(a, b, strict=True)\ncast(int | str, y)\n"
    assert len(violations(ast.parse(bad))) == 4
    good = "def f(x: int | None) -> str | None: ...\nN = 1 | 2\nisinstance(x, (int, str))\n"
    assert violations(ast.parse(good)) == []
