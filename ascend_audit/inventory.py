"""The inventory: what the audit learned about the node, usable without reading the checks."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context


def build_inventory(ctx: Context) -> dict[str, Any]:
    """Assemble npus, versions, topology and storage from the facts this run gathered."""
    from ascend_audit.gather import inventory_sections

    facts = ctx.known_facts()
    inv: dict[str, Any] = {"npus": [], "versions": {}, "topology": {}, "storage": {}}
    for section in inventory_sections(facts):
        for key, value in section.items():
            if isinstance(value, dict) and isinstance(inv.get(key), dict):
                inv[key].update(value)
            else:
                inv[key] = value
    return inv
