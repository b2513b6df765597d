"""Helpers every parser shares: a capped problem list and JSON-ready conversion of facts."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

MAX_PROBLEMS = 200


class Problems:
    """Collects problems, capped so a hostile input cannot make the list unbounded."""

    def __init__(self, limit: int = MAX_PROBLEMS) -> None:
        self.items: list[str] = []
        self.dropped = 0
        self.limit = limit

    def add(self, msg: str) -> None:
        if len(self.items) < self.limit:
            self.items.append(msg[:300])
        else:
            self.dropped += 1

    def extend(self, msgs: Iterable[str]) -> None:
        for m in msgs:
            self.add(m)

    def result(self) -> tuple[str, ...]:
        if self.dropped:
            return (*self.items, f"{self.dropped} further problems not listed")
        return tuple(self.items)


def to_jsonable(obj: Any) -> Any:
    """A fact dataclass (nested dataclasses, tuples, dicts, dates) as JSON-serialisable data."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (datetime, date)):
        return obj.isoformat()
    return obj
