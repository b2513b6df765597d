"""What every hccn_tool parser shares: the tool's error strings, health codes, and the
never-raise decorator."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

NA_VALUES = frozenset({"", "NA", "N/A", "na", "-", "--", "not supported", "get failed"})

# Error strings printed by hccn_tool (cmd.c error table); any of them means "no data".
HCCN_ERRORS: tuple[str, ...] = (
    "Command execute failed",
    "Get ipconf failed",
    "Get gateway failed",
    "Control link unreachable",
    "The system is in optical module initializing",
    "Command unsupported on this optical module",
    "Execute failed",
    "Get unknown option",
    "hccn_tool: command not found",
    "hccn_tool not found",
    "No such file or directory",
    "Permission denied",
)
ERROR_RE = re.compile("|".join(re.escape(e) for e in HCCN_ERRORS), re.IGNORECASE)

# DCMI network-health codes and the text the 910B tool prints for them.
NET_HEALTH_CODES: dict[str, int] = {
    "Success": 0,
    "Socket fail": 1,
    "Receive timeout": 2,
    "Unreachable": 3,
    "Time exceeded": 4,
    "Fault": 5,
    "Init": 6,
    "Thread error": 7,
    "Detect ip set": 8,
    "Unknown": 9,
}

# ---------------------------------------------------------------------------------------------
# shared helpers

_T = TypeVar("_T")


def never_raises(empty: Callable[[str], _T]) -> Callable[[Callable[..., _T]], Callable[..., _T]]:
    """Decorator: a parser that crashes returns `empty(problem)` instead of raising."""

    def wrap(fn: Callable[..., _T]) -> Callable[..., _T]:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> _T:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # pragma: no cover - last line of defence
                return empty(f"{fn.__name__}: internal parser error {type(exc).__name__}: {exc}")

        return inner

    return wrap


_IPV4_RE = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")


def is_ipv4(value: str) -> bool:
    m = _IPV4_RE.match(value)
    return m is not None and all(int(g) <= 255 for g in m.groups())


def prefix_len(mask: str | None) -> int | None:
    """Prefix length of a dotted netmask (None if not a contiguous mask)."""
    if not mask or not is_ipv4(mask):
        return None
    n = 0
    for part in mask.split("."):
        n = (n << 8) | int(part)
    bits = f"{n:032b}"
    if "01" in bits:
        return None
    return bits.count("1")


def is_elision(line: str) -> bool:
    s = line.strip()
    if not s or s[0] not in ".…":
        return False
    return set(s) <= {".", " ", "…"} and (s.count(".") >= 3 or "…" in s)
