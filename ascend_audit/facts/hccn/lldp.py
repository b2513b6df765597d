"""`hccn_tool -i N -lldp -g`: the switch port each device's link sees."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_int, to_jsonable
from ascend_audit.facts.hccn.base import is_elision, never_raises
from ascend_audit.facts.hccn.loops import DeviceChunk, chunks_for, note_duplicates

# ---------------------------------------------------------------------------------------------
# -lldp -g


@dataclass(frozen=True)
class LldpNeighbour:
    """The switch (or peer NPU) a device port sees over LLDP."""

    device: int | None
    tlvs: tuple[tuple[str, tuple[str, ...]], ...]  # (TLV name, value lines)
    chassis_id: str | None
    port_id: str | None
    port_ifname: str | None
    system_name: str | None
    system_description: str | None
    capabilities: str | None
    management_address: str | None
    max_frame_size: int | None
    kind: str | None  # "route" (switched), "fiber" (NPU back-to-back), None


@dataclass(frozen=True)
class LldpFacts:
    """LLDP neighbours per device."""

    devices: tuple[LldpNeighbour, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_TLV_RE = re.compile(r"^([A-Z][A-Za-z0-9 /]*?\bTLV)\s*$")


def _lldp_neighbour(c: DeviceChunk) -> LldpNeighbour:
    tlvs: list[tuple[str, list[str]]] = []
    for ln in c.lines:
        if is_elision(ln):
            continue
        m = _TLV_RE.match(ln.rstrip())
        if m and not ln[:1].isspace():
            tlvs.append((m.group(1), []))
            continue
        if not tlvs:
            tlvs.append(("", []))  # value lines without a TLV name (grep'd output)
        if ln.strip():
            tlvs[-1][1].append(ln.strip())
    frozen = tuple((n, tuple(v)) for n, v in tlvs)

    def first(name: str) -> str | None:
        for n, vals in frozen:
            if n.lower() == name.lower() and vals:
                return vals[0]
        return None

    ifname = None
    for _n, vals in frozen:
        for v in vals:
            if v.lower().startswith("ifname:"):
                ifname = v.split(":", 1)[1].strip()
                break
        if ifname:
            break
    desc_lines = next((v for n, v in frozen if n.lower() == "system description tlv"), ())
    desc = "\n".join(desc_lines) if desc_lines else None
    kind = None
    if desc_lines:
        head = desc_lines[0]
        kind = "route" if "Routing" in head else "fiber" if "AscendNPU" in head else None
    mgmt = first("Management Address TLV")
    if mgmt and ":" in mgmt:
        mgmt = mgmt.split(":", 1)[1].strip()
    mfs = first("Maximum Frame Size TLV")
    chassis = first("Chassis ID TLV")
    return LldpNeighbour(
        device=c.device,
        tlvs=frozen,
        chassis_id=chassis,
        port_id=first("Port ID TLV"),
        port_ifname=ifname,
        system_name=first("System Name TLV"),
        system_description=desc,
        capabilities=first("System Capabilities TLV"),
        management_address=mgmt,
        max_frame_size=to_int(mfs),
        kind=kind,
    )


@never_raises(lambda p: LldpFacts((), (p,)))
def parse_lldp(text: str | bytes) -> LldpFacts:
    """Parse `hccn_tool -i N -lldp -g` (full TLV blocks, or `| grep Ifname` loops)."""
    probs = Problems()
    out = [_lldp_neighbour(c) for c in chunks_for(text, "lldp", probs)]
    note_duplicates((d.device for d in out), probs, "lldp")
    return LldpFacts(tuple(out), probs.result())
