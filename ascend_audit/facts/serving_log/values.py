"""Value converters, evidence excerpts and the rule type shared by the signature modules."""

from __future__ import annotations

import re
from collections.abc import Callable

from ascend_audit.facts.serving_log.model import Scalar

_EXCERPT = 400  # evidence text kept per hit; a window around the match on long lines


def as_num(s: str) -> float | None:
    """A number, thousands separators allowed, else None."""
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return None


def as_int(s: str) -> int | None:
    """A whole number, else None."""
    v = as_num(s)
    return int(v) if v is not None and v.is_integer() and abs(v) < 1e18 else None


def literal(raw: str) -> Scalar:
    """A Python / JSON literal as logged (quoted string, None, bool, number), else the text."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if raw in ("None", "null"):
        return None
    if raw in ("True", "true"):
        return True
    if raw in ("False", "false"):
        return False
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        return raw


def excerpt(line: str, start: int, end: int) -> str:
    """The line, or on a long line a window around [start, end)."""
    if len(line) <= _EXCERPT:
        return line.strip()
    half = max((_EXCERPT - (end - start)) // 2, 40)
    lo = max(start - half, 0)
    hi = min(max(end + half, lo + _EXCERPT), len(line))
    return ("…" if lo else "") + line[lo:hi].strip() + ("…" if hi < len(line) else "")


def clip(text: str, n: int = 300) -> str:
    """The text stripped and cut to n characters."""
    text = text.strip()
    return text if len(text) <= n else text[: n - 1] + "…"


# Each rule: (trigger substring, regex, signal, category, value from match). The trigger is a
# cheap `in` test that guards the regex, so most lines cost a few substring scans.
Value = Callable[[re.Match[str]], Scalar]
Rule = tuple[str, "re.Pattern[str]", str, str, Value]


def group(i: int = 1, conv: Callable[[str], Scalar] = str) -> Value:
    """A rule value: match group i through conv."""
    return lambda m: conv(m.group(i))


def true(_: re.Match[str]) -> Scalar:
    """A rule value: the line matched."""
    return True


class Rules(list[Rule]):
    """An ordered rule list; `add` compiles and appends one rule."""

    def add(
        self, trigger: str, pattern: str, signal: str, category: str, value: Value = true
    ) -> None:
        """Append one rule: a substring trigger guarding its regex."""
        self.append((trigger, re.compile(pattern), signal, category, value))
