"""Classes of serving-log lines by consequence (`data/serving_line_classes.toml`): start-up deaths
with their cause class and checklist, and warnings an engine survives."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_DATA = "serving_line_classes.toml"


@dataclass(frozen=True)
class DeathClass:
    """What a start-up death means: what failed, the class of cause, and how to tell which."""

    kind: str
    label: str
    cause: str
    checklist: tuple[str, ...]
    source: str
    example: str
    match: str = ""


@dataclass(frozen=True)
class SurvivableClass:
    """A warning the engine survives: at most a WARN with its reason while the engine serves."""

    name: str
    pattern: re.Pattern[str]
    what: str
    reason: str
    source: str
    example: str


@dataclass(frozen=True)
class LineClasses:
    """The packaged catalog."""

    deaths: tuple[DeathClass, ...]
    survivable: tuple[SurvivableClass, ...]
    version: str


@lru_cache(maxsize=1)
def line_classes() -> LineClasses:
    """The packaged catalog, read once."""
    from importlib import resources

    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]

    text = resources.files("ascend_audit.data").joinpath(_DATA).read_text("utf-8")
    data: dict[str, Any] = tomllib.loads(text)
    deaths = tuple(
        DeathClass(
            kind=str(e["kind"]),
            label=str(e["label"]),
            cause=str(e["cause"]),
            checklist=tuple(str(c) for c in e.get("checklist", ())),
            source=str(e["source"]),
            example=str(e.get("example", "")),
            match=str(e.get("match", "")),
        )
        for e in data.get("death", ())
    )
    survivable = tuple(
        SurvivableClass(
            name=str(e["name"]),
            pattern=re.compile(str(e["pattern"])),
            what=str(e["what"]),
            reason=str(e["reason"]),
            source=str(e["source"]),
            example=str(e.get("example", "")),
        )
        for e in data.get("survivable", ())
    )
    return LineClasses(deaths, survivable, str(data.get("meta", {}).get("version", "")))


def death_class(kind: str, text: str = "") -> DeathClass | None:
    """The class of a death of this kind; the entry whose `match` the line holds comes first."""
    entries = [d for d in line_classes().deaths if d.kind == kind]
    return next(
        (d for d in entries if d.match and d.match in text), entries[0] if entries else None
    )


def survivable(text: str) -> SurvivableClass | None:
    """The survivable-warning class a line belongs to, or None."""
    return next((s for s in line_classes().survivable if s.pattern.search(text)), None)
