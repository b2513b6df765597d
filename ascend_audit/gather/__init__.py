"""Gatherers: host I/O plus a pure parser, one fact each, built at most once per run.

Each module of this package registers its gatherers with `@gatherer` and may define
`inventory(facts) -> dict` to contribute what it learned to the report's inventory.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType
from typing import Any


@cache
def gather_modules() -> tuple[ModuleType, ...]:
    """Every gather module, imported once."""
    import ascend_audit.gather as pkg

    return tuple(
        importlib.import_module(f"{pkg.__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name)
    )


def inventory_sections(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """Each gather module's contribution to the report inventory."""
    return [m.inventory(facts) for m in gather_modules() if hasattr(m, "inventory")]
