"""The accessory stack: NNAL/ATB, opp_kernel, MindIE, atb-models versions, and the chip family.

Version files come in two grammars: `Key : Value` (ATB, MindIE, atb-models) and `key=value`
(opp_kernel, CANN); pasted copies may carry `cat -n` numbers and code fences. Rules pairing the
components live as data with their sources in `ascend_audit/data/accessory_stack.csv`.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from importlib import resources

from ascend_audit.facts.keys import FactKey

__all__ = [
    "ACCESSORY_STACK",
    "AccessoryStack",
    "Component",
    "StackRule",
    "chip_family",
    "load_rules",
    "parse_version_info",
    "release_of",
]

MAX_TEXT = 256 * 1024
_LINE_RE = re.compile(r"^\s*(?:\d+\s+)?([A-Za-z][\w .-]*?)\s*[:=]\s*(.*?)\s*$")
_RELEASE_RE = re.compile(r"^(\d+\.\d+\.(?:RC\d+|\d+|T\d+))", re.IGNORECASE)


@dataclass(frozen=True)
class Component:
    """One accessory component: where its version file is, and the version it names."""

    name: str
    path: str
    version: str | None = None
    excerpt: str = ""
    error: str | None = None  # why the file was not read (absent: the component is not installed)


@dataclass(frozen=True)
class AccessoryStack:
    """Versions of the accessories, the CANN toolkit they must pair with, and the chips."""

    components: tuple[Component, ...] = ()
    cann: str | None = None
    cann_source: str = ""
    chips: tuple[str, ...] = ()  # npu-smi chip names
    packages: tuple[tuple[str, str], ...] = ()  # probe packages with versions
    build_device_type: str | None = None
    build_soc_version: str | None = None
    probe_source: str = ""

    def get(self, name: str) -> Component | None:
        return next((c for c in self.components if c.name == name), None)

    def package(self, name: str) -> str | None:
        return dict(self.packages).get(name)


@dataclass(frozen=True)
class StackRule:
    """A row of accessory_stack.csv."""

    rule: str
    component: str
    chip_family: str
    expect: str
    verdict: str  # FAIL | WARN | PASS
    source: str


def parse_version_info(text: str | None, keys: tuple[str, ...]) -> str | None:
    """The first of `keys` (case-insensitive) in a version file of either grammar."""
    if not text:
        return None
    want = [k.lower() for k in keys]
    found: dict[str, str] = {}
    for raw in text[:MAX_TEXT].splitlines():
        line = raw.strip().strip("`").strip()
        m = _LINE_RE.match(line)
        if m and m.group(2):
            found.setdefault(m.group(1).strip().lower(), m.group(2).strip())
    return next((found[k] for k in want if k in found), None)


def release_of(version: str | None) -> str | None:
    """The release a build belongs to: 8.0.0.B100 -> 8.0.0, 8.0.RC3.alpha001 -> 8.0.RC3."""
    if not version:
        return None
    m = _RELEASE_RE.match(version.strip())
    return m.group(1).upper().replace("RC", "RC") if m else version.strip()


def chip_family(name: str | None) -> str | None:
    """A2 (910B*), A3 (910_93*, 910C), 910 (910A / Pro B), 310P, 310B, 950 from a chip name."""
    if not name:
        return None
    n = name.strip().upper().replace("ASCEND", "").replace(" ", "")
    if n.startswith("910B"):
        return "A2"
    if n.startswith(("910_93", "91093", "910C")):
        return "A3"
    if n.startswith("910"):
        return "910"
    if n.startswith("310P"):
        return "310P"
    if n.startswith("310B"):
        return "310B"
    if n.startswith("950"):
        return "950"
    return None


def load_rules(text: str | None = None) -> tuple[StackRule, ...]:
    """The rows of the bundled accessory_stack.csv (or of `text`)."""
    if text is None:
        text = resources.files("ascend_audit.data").joinpath("accessory_stack.csv").read_text()
    rows = csv.DictReader(io.StringIO(text))
    return tuple(
        StackRule(
            r.get("rule") or "",
            r.get("component") or "",
            r.get("chip_family") or "",
            r.get("expect") or "",
            (r.get("verdict") or "WARN").upper(),
            r.get("source") or "",
        )
        for r in rows
        if r.get("rule")
    )


ACCESSORY_STACK: FactKey[AccessoryStack] = FactKey("accessory_stack")
