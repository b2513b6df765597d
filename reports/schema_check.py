"""Validate a report's JSON against reports/report.schema.json, without a schema library.

Supports the keywords the report's schema uses: type, enum, const, required, properties,
additionalProperties, items, $ref (to #/$defs), minLength, minimum, pattern.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def schema_problem(data: Any, schema: dict[str, Any]) -> str | None:
    """The first place where DATA breaks SCHEMA, as `path: what`, or None when it conforms."""
    return _check(data, schema, schema, "$")


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part, {}) if isinstance(target, dict) else {}
    return target if isinstance(target, dict) else {}


def _check(value: Any, node: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    node = _resolve(node, root)
    for rule in (_type_rule, _value_rule, _object_rule, _array_rule):
        problem = rule(value, node, root, path)
        if problem:
            return problem
    return None


def _type_rule(value: Any, node: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    wanted = node.get("type")
    if wanted is None:
        return None
    names = wanted if isinstance(wanted, list) else [wanted]
    if any(_TYPES.get(n, lambda _v: False)(value) for n in names):
        return None
    return f"{path}: expected {' or '.join(names)}, got {_json_type(value)}"


def _value_rule(value: Any, node: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    if "const" in node and value != node["const"]:
        return f"{path}: must be {node['const']!r}"
    if "enum" in node and value not in node["enum"]:
        return f"{path}: {_short(value)} is not one of {', '.join(map(str, node['enum']))}"
    if isinstance(value, str):
        if len(value) < node.get("minLength", 0):
            return f"{path}: shorter than {node['minLength']} character(s)"
        pattern = node.get("pattern")
        if isinstance(pattern, str) and not re.search(pattern, value):
            return f"{path}: {_short(value)} does not match {pattern}"
    minimum = node.get("minimum")
    if minimum is not None and _TYPES["number"](value) and value < minimum:
        return f"{path}: {value} is below {minimum}"
    return None


def _object_rule(value: Any, node: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    if not isinstance(value, dict):
        return None
    for key in node.get("required", ()):
        if key not in value:
            return f"{path}: missing {key!r}"
    props = node.get("properties", {})
    extra = node.get("additionalProperties", True)
    for key, item in value.items():
        sub = props.get(key)
        if sub is None and isinstance(extra, dict):
            sub = extra
        elif sub is None and extra is False:
            return f"{path}: unexpected key {key!r}"
        if isinstance(sub, dict):
            problem = _check(item, sub, root, f"{path}.{key}")
            if problem:
                return problem
    return None


def _array_rule(value: Any, node: dict[str, Any], root: dict[str, Any], path: str) -> str | None:
    items = node.get("items")
    if not isinstance(value, list) or not isinstance(items, dict):
        return None
    for i, item in enumerate(value):
        problem = _check(item, items, root, f"{path}[{i}]")
        if problem:
            return problem
    return None


def _json_type(value: Any) -> str:
    return next((n for n, test in _TYPES.items() if n != "number" and test(value)), "number")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
