"""Typed fact keys: `ctx.fact(TOPOLOGY)` returns a `Topology`, and mypy knows it.

A key is defined beside the fact type it names (for example `facts/topology.py` holds
`TOPOLOGY: FactKey[Topology]`); its gatherer registers under the same key. The key's name is the
string the fact is stored under in the inventory and in snapshots, so a string still finds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class FactKey(Generic[T]):
    """The name of one gathered fact, typed by the value its gatherer returns."""

    name: str

    def __str__(self) -> str:
        return self.name
