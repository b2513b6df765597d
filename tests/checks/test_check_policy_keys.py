"""Each check's TOML lists the policy keys it reads; the registry validates them on load."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ascend_audit.policy import SCHEMA
from ascend_audit.registry import Registry, RegistryError, check, load_registry

CHECKS = Path(__file__).resolve().parents[2] / "checks"
KEYS = {f"{s}.{k}" for s, keys in SCHEMA.items() for k in keys}


def read_keys(path: Path) -> dict[str, set[str]]:
    """Per @check function: the policy keys named in it and in the module code it reaches."""
    tree = ast.parse(path.read_text())
    defs: dict[str, ast.AST] = {}
    checks: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defs[node.name] = node
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and getattr(d.func, "id", "") == "check":
                    checks[node.name] = d.args[0].value  # type: ignore[attr-defined]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name):
                defs[target.id] = node
    out: dict[str, set[str]] = {}
    for fn, cid in checks.items():
        seen: set[str] = set()
        todo, found = [fn], set()
        while todo:
            name = todo.pop()
            if name in seen or name not in defs:
                continue
            seen.add(name)
            for x in ast.walk(defs[name]):
                if isinstance(x, ast.Constant) and x.value in KEYS:
                    found.add(x.value)
                elif isinstance(x, ast.Name) and x.id in defs:
                    todo.append(x.id)
        out[cid] = found
    return out


def test_every_check_declares_exactly_the_policy_keys_its_code_reads():
    specs = {s.id: s for s in load_registry(entry_points=False, catalogue_only=True).all()}
    derived: dict[str, set[str]] = {}
    for path in sorted(CHECKS.rglob("*.py")):
        derived.update(read_keys(path))
    assert len(derived) >= 20, "no @check functions found under checks/"
    wrong = {
        cid: {"declared": sorted(specs[cid].policy_keys), "reads": sorted(keys)}
        for cid, keys in derived.items()
        if set(specs[cid].policy_keys) != keys
    }
    assert wrong == {}


def test_unknown_policy_key_is_refused_at_registration():
    @check("X-POL-001", layer="driver", title="t", policy=["driver.no_such_key"])
    def judged(ctx):  # pragma: no cover - never run
        return None

    with pytest.raises(RegistryError, match=r"driver\.no_such_key.*not in the policy schema"):
        Registry().add_function(judged, "test")


def test_plugin_keys_and_known_keys_register():
    @check(
        "X-POL-002", layer="operator", title="t", policy=["operator.aicpu_share_fail", "plugins.x"]
    )
    def judged(ctx):  # pragma: no cover - never run
        return None

    reg = Registry()
    reg.add_function(judged, "test")
    spec = reg.get("X-POL-002")
    assert spec is not None
    assert spec.policy_keys == ("operator.aicpu_share_fail", "plugins.x")
