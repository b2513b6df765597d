"""`hccn_tool -i N -link -g`: link status per device."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_jsonable
from ascend_audit.facts.hccn.base import never_raises
from ascend_audit.facts.hccn.loops import chunks_for, error_of, note_duplicates

# ---------------------------------------------------------------------------------------------
# -link -g


@dataclass(frozen=True)
class DeviceLink:
    """`link status: UP|DOWN` of one device (status None when not printed)."""

    device: int | None
    status: str | None  # "UP" | "DOWN" | other text as printed, upper-cased
    vnic: bool = False  # from `-vnic -g` (A3 in-pod virtual NIC)
    error: str | None = None

    @property
    def up(self) -> bool:
        return self.status == "UP"


@dataclass(frozen=True)
class LinkFacts:
    """Link state per device."""

    devices: tuple[DeviceLink, ...]
    problems: tuple[str, ...] = ()

    @property
    def down(self) -> tuple[DeviceLink, ...]:
        return tuple(d for d in self.devices if not d.up)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_LINK_RE = re.compile(r"^\s*(vnic\s+)?link status\s*:\s*(\S+)", re.IGNORECASE)


@never_raises(lambda p: LinkFacts((), (p,)))
def parse_link(text: str | bytes) -> LinkFacts:
    """Parse `hccn_tool -i N -link -g` (or `-vnic -g`) output, single or looped."""
    probs = Problems()
    out: list[DeviceLink] = []
    for c in chunks_for(text, "link", probs):
        status: str | None = None
        vnic = False
        for ln in c.lines:
            m = _LINK_RE.match(ln)
            if m:
                status, vnic = m.group(2).upper(), bool(m.group(1))
                break
        err = error_of(c.lines)
        if status is None and err is None and not c.lines:
            err = "no output"
        if status is None:
            probs.add(f"device {c.device}: no `link status:` line")
        elif status not in ("UP", "DOWN"):
            probs.add(f"device {c.device}: unexpected link status {status!r}")
        out.append(DeviceLink(c.device, status, vnic, err))
    note_duplicates((d.device for d in out), probs, "link")
    return LinkFacts(tuple(out), probs.result())
