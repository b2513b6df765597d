"""`hccn_tool -i N -gateway -g`: default gateway per device."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_jsonable
from ascend_audit.facts.hccn.base import is_ipv4, never_raises
from ascend_audit.facts.hccn.loops import chunks_for, error_of, note_duplicates

# ---------------------------------------------------------------------------------------------
# -gateway -g / -netdetect -g


@dataclass(frozen=True)
class DeviceGateway:
    """`default gateway:<ip>, Iface:ethN` of one device."""

    device: int | None
    gateway: str | None
    iface: str | None
    error: str | None = None


@dataclass(frozen=True)
class GatewayFacts:
    """Default gateway per device."""

    devices: tuple[DeviceGateway, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_GATEWAY_RE = re.compile(
    r"^\s*default gateway\s*:\s*([^,\s]*)\s*(?:,\s*Iface\s*:\s*(\S+))?", re.IGNORECASE
)


@never_raises(lambda p: GatewayFacts((), (p,)))
def parse_gateway(text: str | bytes) -> GatewayFacts:
    """Parse `hccn_tool -i N -gateway -g` output, single or looped."""
    probs = Problems()
    out: list[DeviceGateway] = []
    for c in chunks_for(text, "gateway", probs):
        gw = iface = None
        for ln in c.lines:
            m = _GATEWAY_RE.match(ln)
            if m:
                gw, iface = m.group(1) or None, m.group(2)
                break
        err = error_of(c.lines)
        if gw is None and err is None:
            err = "no gateway printed"
        if gw is not None and not is_ipv4(gw) and ":" not in gw:
            probs.add(f"device {c.device}: gateway {gw!r} is not an IP address")
        out.append(DeviceGateway(c.device, gw, iface, err))
    note_duplicates((d.device for d in out), probs, "gateway")
    return GatewayFacts(tuple(out), probs.result())
