"""`hccn_tool -i N -net_health -g`: network health per device."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_jsonable
from ascend_audit.facts.hccn.base import NET_HEALTH_CODES, never_raises
from ascend_audit.facts.hccn.loops import chunks_for, error_of, note_duplicates

# ---------------------------------------------------------------------------------------------
# -net_health -g


@dataclass(frozen=True)
class DeviceNetHealth:
    """`net health status: <state>` of one device."""

    device: int | None
    state: str | None  # canonical text from NET_HEALTH_CODES, or the raw text if unknown
    raw: str | None
    code: int | None
    level: str  # "ok" (Success), "warn" (Init), "fail" (anything else), "unknown" (no data)
    error: str | None = None


@dataclass(frozen=True)
class NetHealthFacts:
    """Network health per device."""

    devices: tuple[DeviceNetHealth, ...]
    problems: tuple[str, ...] = ()

    @property
    def not_success(self) -> tuple[DeviceNetHealth, ...]:
        return tuple(d for d in self.devices if d.level != "ok")

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_NET_HEALTH_RE = re.compile(r"^\s*net health status\s*:\s*(.*?)\s*$", re.IGNORECASE)


def _net_health_state(raw: str) -> tuple[str, int | None]:
    low = raw.lower()
    for name, code in NET_HEALTH_CODES.items():
        # prefix match: FaultDiag prints "Socket failed", the tool source "Socket fail"
        if low.startswith(name.lower()):
            return name, code
    return raw, None


@never_raises(lambda p: NetHealthFacts((), (p,)))
def parse_net_health(text: str | bytes) -> NetHealthFacts:
    """Parse `hccn_tool -i N -net_health -g` output, single or looped."""
    probs = Problems()
    out: list[DeviceNetHealth] = []
    for c in chunks_for(text, "net_health", probs):
        raw: str | None = None
        for ln in c.lines:
            m = _NET_HEALTH_RE.match(ln)
            if m:
                raw = m.group(1)
                break
        err = error_of(c.lines)
        if raw is None:
            probs.add(f"device {c.device}: no `net health status:` line")
            out.append(DeviceNetHealth(c.device, None, None, None, "unknown", err))
            continue
        state, code = _net_health_state(raw)
        if code is None:
            probs.add(f"device {c.device}: unknown net health state {raw!r}")
        level = "ok" if code == 0 else "warn" if code == 6 else "fail"
        out.append(DeviceNetHealth(c.device, state, raw, code, level, err))
    note_duplicates((d.device for d in out), probs, "net_health")
    return NetHealthFacts(tuple(out), probs.result())
