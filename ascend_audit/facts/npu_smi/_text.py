"""Text helpers shared by the npu-smi parsers: line splitting, numbers, bus ids."""

from __future__ import annotations

import re

_NA = frozenset({"", "NA", "N/A", "-", "--"})
_BUS_RE = re.compile(r"^(?:([0-9a-f]{4,8}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")
_HEADER_RE = re.compile(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)")
_IDLE_RE = re.compile(r"No running processes found in NPU\s+(-?\d+)")
_NPU_LABEL_RE = re.compile(r"^NPU(\d+)$")
_RANGE_RE = re.compile(r"^(\d{1,7})(?:-(\d{1,7}))?$")
_INT_RE = re.compile(r"^-?\d{1,18}$")
_FLOAT_RE = re.compile(r"^-?\d{1,12}(?:\.\d{1,6})?$")


def _lines(text: str) -> list[str]:
    """Split decoded text into lines, dropping NULs and CRs."""
    if not isinstance(text, str):
        return []
    return text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _to_int(value: str) -> int | None:
    v = value.strip()
    return int(v) if _INT_RE.match(v) else None


def _to_float(value: str) -> float | None:
    v = value.strip()
    return float(v) if _FLOAT_RE.match(v) else None


def normalize_bus_id(value: str) -> str | None:
    """Return a PCI address as `dddd:bb:dd.f` in lower case (domain added if absent), or None."""
    m = _BUS_RE.match(value.strip().lower())
    if not m:
        return None
    domain = (m.group(1) or "0000").rjust(4, "0")
    return f"{domain}:{m.group(2)}:{m.group(3)}.{m.group(4)}"
