"""Helpers every parser shares: a capped problem list and JSON-ready conversion of facts."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

MAX_PROBLEMS = 200
MAX_LINE = 4096  # longer lines are cut before any regex sees them
_INT_RE = re.compile(r"^[-+]?\d{1,19}$")
_FLOAT_RE = re.compile(r"^[-+]?\d{1,12}(?:\.\d{1,12})?$")


def as_text(value: Any) -> str:
    """Any parser input as str: bytes decode with replacement, other types become ''."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    return ""


def split_lines(text: Any, max_line: int | None = MAX_LINE) -> list[str]:
    """Lines of a command's output without NULs or CRs, each cut to `max_line` characters."""
    s = as_text(text).replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    lines = s.split("\n")
    return lines if max_line is None else [ln[:max_line] for ln in lines]


def to_int(value: str | None) -> int | None:
    """A plain decimal integer (optional sign, at most 19 digits); None for anything else."""
    if value is None:
        return None
    v = value.strip()
    return int(v) if _INT_RE.match(v) else None


def to_float(value: str | None) -> float | None:
    """A plain decimal number (no exponent, no inf or nan); None for anything else."""
    if value is None:
        return None
    v = value.strip()
    return float(v) if _FLOAT_RE.match(v) else None


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
