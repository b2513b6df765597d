"""The bundled example nodes: snapshot directories shipped in `ascend_audit.examples`."""

from __future__ import annotations

import json
import os
from importlib import resources


def _root() -> str:
    return str(resources.files("ascend_audit.examples"))


def list_examples() -> list[tuple[str, str]]:
    """(name, one-line description) of every bundled example."""
    out = []
    root = _root()
    for name in sorted(os.listdir(root)):
        manifest = os.path.join(root, name, "manifest.json")
        if os.path.isfile(manifest):
            try:
                with open(manifest, encoding="utf-8") as fh:
                    description = json.load(fh).get("description", "")
            except (OSError, ValueError):
                description = "(unreadable manifest)"
            out.append((name, description))
    return out


def example_path(name: str) -> str | None:
    """Directory of the named example, or None."""
    if name in {n for n, _ in list_examples()}:
        return os.path.join(_root(), name)
    return None
