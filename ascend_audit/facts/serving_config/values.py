"""Converters the serving-config parsers share: bounded JSON-like loading, scalars from
command-line strings, graph-mode names, and the line a key was read from."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

MAX_TEXT = 16 * 1024 * 1024
MAX_NODES = 20000
_MAX_DEPTH = 32
_CUDAGRAPH_INT = {0: "NONE", 1: "PIECEWISE", 2: "FULL"}
_CUDAGRAPH_PAIR = {(2, 0): "FULL_DECODE_ONLY", (2, 1): "FULL_AND_PIECEWISE"}
_MODE_NAMES = {0: "NONE", 1: "STOCK_TORCH_COMPILE", 2: "DYNAMO_TRACE_ONCE", 3: "VLLM_COMPILE"}


def jsonable(obj: Any, budget: list[int], depth: int = 0) -> Any:
    """A JSON-able copy of parsed YAML/JSON, bounded in size and depth (aliases can loop)."""
    budget[0] -= 1
    if budget[0] < 0 or depth > _MAX_DEPTH:
        raise ValueError("structure too large or too deep")
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else str(obj)
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v, budget, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable(v, budget, depth + 1) for v in obj]
    return str(obj)


def load_json_like(raw: str) -> tuple[Any, str | None]:
    """Parse a JSON (or Python-literal) option value; return (value, problem)."""
    text = raw.strip()
    if len(text) > MAX_TEXT:
        return None, "value too large"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None, f"not valid JSON: {exc}"
    try:
        return jsonable(value, [MAX_NODES]), None
    except (ValueError, RecursionError) as exc:
        return None, str(exc)


def scalar(raw: Any) -> Any:
    """Turn a command-line string into bool/int/float/None where it plainly is one."""
    if not isinstance(raw, str):
        return raw
    low = raw.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        f = float(raw)
    except ValueError:
        return raw
    return f if f == f else raw


def as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        s = scalar(v)
        return as_int(s) if not isinstance(s, str) else None
    return None


def as_float(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = scalar(v)
        return as_float(s) if not isinstance(s, str) else None
    return None


def as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        s = scalar(v)
        return s if isinstance(s, bool) else None
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    return None


def as_str(v: Any) -> str | None:
    if v is None or isinstance(v, (dict, list)):
        return None
    return str(v)


def cudagraph_name(value: Any) -> str | None:
    """Normalise a cudagraph_mode value (name, enum repr, int or [int, int]) to its name."""
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _CUDAGRAPH_INT.get(value, str(value))
    if isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) for x in value):
        return _CUDAGRAPH_PAIR.get((value[0], value[1]), str(value))
    s = str(value).strip().strip("'\"")
    return s.rsplit(".", 1)[-1].upper() or None


def mode_name(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return _MODE_NAMES.get(value, str(value))
    s = str(value).strip()
    if s.isdigit():
        return _MODE_NAMES.get(int(s), s)
    return s.rsplit(".", 1)[-1].upper() or None


def norm_flag(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


def jsonable_safe(value: Any) -> Any:
    try:
        return jsonable(value, [MAX_NODES])
    except (ValueError, RecursionError):
        return str(value)[:200]


_TOP_KEY = re.compile(r"""^\s*["']?([^\s"':#][^"':]*?)["']?\s*:""")


def top_level_keys(lines: list[str]) -> dict[str, tuple[int, str]]:
    """First line of each `key:` that starts a line, in one pass (evidence positions)."""
    found: dict[str, tuple[int, str]] = {}
    for i, line in enumerate(lines, 1):
        m = _TOP_KEY.match(line)
        if m and m.group(1) not in found:
            found[m.group(1)] = (i, line.strip()[:500])
    return found


def find_lineno(lines: list[str], key: str) -> tuple[int | None, str]:
    """First line mentioning a key (as `key:` / `"key"`), for evidence; linear in the text."""
    pat = re.compile(r"(^|[\s\"'{,])" + re.escape(key) + r"[\"']?\s*:")
    for i, line in enumerate(lines, 1):
        if key in line and pat.search(line):
            return i, line.strip()[:500]
    return None, ""
