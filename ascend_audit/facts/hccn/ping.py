"""`hccn_tool -i N -ping -g address IP`: reachability and round-trip times."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_float, to_jsonable
from ascend_audit.facts.hccn.base import ERROR_RE, never_raises
from ascend_audit.facts.hccn.loops import chunks_for

# ---------------------------------------------------------------------------------------------
# -ping -g address <ip>


@dataclass(frozen=True)
class DevicePing:
    """RoCE ping from one device to one address."""

    device: int | None
    target: str | None
    transmitted: int | None
    received: int | None
    loss_pct: float | None
    rtts_ms: tuple[float, ...]
    failures: tuple[str, ...]  # timeout / unreachable lines

    @property
    def ok(self) -> bool:
        return bool(self.transmitted) and self.received == self.transmitted


@dataclass(frozen=True)
class PingFacts:
    """Ping results per device."""

    devices: tuple[DevicePing, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_PING_HEAD_RE = re.compile(r"^\s*device\s+(\d{1,4})\s+PING\s+(\S+)")
_PING_SEQ_RE = re.compile(r"recv seq\s*=?\s*\d+\s*,\s*time\s*=\s*([\d.]+)\s*(ms|us)")
_PING_SUM_RE = re.compile(
    r"(\d+)\s+packets? transmitted,\s*(\d+)\s+received,\s*([\d.]+)%\s+packets?\s+loss"
)
_PING_FAIL_RE = re.compile(r"recv time out|Destination Host Unreachable|Message too long", re.I)


@never_raises(lambda p: PingFacts((), (p,)))
def parse_ping(text: str | bytes) -> PingFacts:
    """Parse `hccn_tool -i N -ping -g address <ip>` output, single or looped."""
    probs = Problems()
    out: list[DevicePing] = []
    for c in chunks_for(text, "ping", probs):
        target = tx = rx = loss = None
        rtts: list[float] = []
        fails: list[str] = []
        dev = c.device
        for ln in c.lines:
            m = _PING_HEAD_RE.match(ln)
            if m:
                dev = int(m.group(1)) if dev is None else dev
                target = m.group(2)
                continue
            m = _PING_SEQ_RE.search(ln)
            if m:
                v = to_float(m.group(1))
                if v is not None:
                    rtts.append(v / 1000 if m.group(2) == "us" else v)
                continue
            m = _PING_SUM_RE.search(ln)
            if m:
                tx, rx, loss = int(m.group(1)), int(m.group(2)), to_float(m.group(3))
                continue
            if _PING_FAIL_RE.search(ln) or ERROR_RE.search(ln):
                fails.append(ln.strip())
        if tx is None:
            probs.add(f"device {dev}: no ping summary line")
        out.append(DevicePing(dev, target, tx, rx, loss, tuple(rtts), tuple(fails)))
    return PingFacts(tuple(out), probs.result())
