"""`hccn_tool -i N -netdetect -g`: the detect address per device."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_jsonable
from ascend_audit.facts.hccn.base import never_raises
from ascend_audit.facts.hccn.loops import chunks_for, error_of, note_duplicates


@dataclass(frozen=True)
class DeviceNetdetect:
    """`netdetect addr: <ip>` of one device (the target of net_health)."""

    device: int | None
    address: str | None
    error: str | None = None


@dataclass(frozen=True)
class NetdetectFacts:
    """Detect IP per device."""

    devices: tuple[DeviceNetdetect, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_NETDETECT_RE = re.compile(r"^\s*netdetect\s+addr(?:ess)?\s*:\s*(\S*)", re.IGNORECASE)


@never_raises(lambda p: NetdetectFacts((), (p,)))
def parse_netdetect(text: str | bytes) -> NetdetectFacts:
    """Parse `hccn_tool -i N -netdetect -g` (`addr:` or pasted `address:`), single or looped."""
    probs = Problems()
    out: list[DeviceNetdetect] = []
    for c in chunks_for(text, "netdetect", probs):
        addr = None
        for ln in c.lines:
            m = _NETDETECT_RE.match(ln)
            if m:
                addr = m.group(1) or None
                break
        err = error_of(c.lines)
        if addr is None and err is None:
            err = "no netdetect address printed"
        out.append(DeviceNetdetect(c.device, addr, err))
    note_duplicates((d.device for d in out), probs, "netdetect")
    return NetdetectFacts(tuple(out), probs.result())
