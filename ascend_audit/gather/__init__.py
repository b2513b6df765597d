"""Gatherers: host I/O plus a pure parser, one fact each, built at most once per run."""

from __future__ import annotations

from typing import Any


def inventory_sections(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """Each layer's contribution to the report inventory."""
    from ascend_audit.gather import driver, framework, operator

    return [m.inventory(facts) for m in (driver, operator, framework) if hasattr(m, "inventory")]
