"""The gather index (which module gathers each fact, which facts each inventory reads) is what
the modules themselves say, so a run that imports only the modules it needs misses nothing."""

from __future__ import annotations

import ast
import inspect

from ascend_audit.context import _GATHERERS
from ascend_audit.facts.keys import FactKey
from ascend_audit.gather import FACT_MODULES, INVENTORY_READS, gather_modules


def _short(module: str) -> str:
    return module.rsplit(".", 1)[1]


def test_fact_index_is_what_the_modules_register() -> None:
    modules = gather_modules()
    registered = {
        name: (_short(fn.__module__), layer)
        for name, (fn, layer, _cmds) in _GATHERERS.items()
        if fn.__module__.startswith("ascend_audit.gather.")
    }
    assert registered == FACT_MODULES
    assert {_short(m.__name__) for m in modules} >= {m for m, _ in FACT_MODULES.values()}


def _facts_read(module: object) -> set[str]:
    """Fact names an inventory() reads (facts.get("x"), facts.get(KEY.name), facts["x"]); fails
    on any other use of `facts` (passed on, iterated, read by a computed name)."""
    fn = module.inventory  # type: ignore[attr-defined]
    tree = ast.parse(inspect.getsource(fn))
    names: set[str] = set()
    seen = 0
    for node in ast.walk(tree):
        arg = None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "facts"
        ):
            arg = node.args[0]
        elif isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "facts":
            arg = node.slice
        if arg is None:
            continue
        seen += 1
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            names.add(arg.value)
        elif isinstance(arg, ast.Attribute) and arg.attr == "name":
            key = getattr(module, arg.value.id)  # type: ignore[attr-defined]
            assert isinstance(key, FactKey)
            names.add(key.name)
        else:
            raise AssertionError(f"{module}: facts read by a computed name: {ast.dump(arg)}")
    uses = sum(isinstance(n, ast.Name) and n.id == "facts" for n in ast.walk(tree))
    assert uses == seen, f"{module}: `facts` used otherwise than read by a literal name"
    return names


def test_inventory_index_is_what_each_inventory_reads() -> None:
    with_inventory = {_short(m.__name__): m for m in gather_modules() if hasattr(m, "inventory")}
    assert set(with_inventory) == set(INVENTORY_READS)
    for short, module in with_inventory.items():
        assert _facts_read(module) == set(INVENTORY_READS[short]), short
        assert module.inventory({}) == {}, short  # nothing gathered: nothing added
