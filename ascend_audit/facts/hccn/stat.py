"""`hccn_tool -i N -stat -g`: packet counters per device."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_jsonable
from ascend_audit.facts.hccn.base import is_elision, never_raises
from ascend_audit.facts.hccn.loops import chunks_for, note_duplicates

# ---------------------------------------------------------------------------------------------
# -stat -g / -fec -g


@dataclass(frozen=True)
class DeviceStat:
    """Packet counters of one device."""

    device: int | None
    counters: tuple[tuple[str, int], ...]

    def counter(self, name: str) -> int | None:
        """Value of a counter (None when absent)."""
        for k, v in self.counters:
            if k == name:
                return v
        return None

    @property
    def roce_rx_err(self) -> int | None:
        return self.counter("roce_rx_err_pkt_num")

    @property
    def roce_tx_err(self) -> int | None:
        return self.counter("roce_tx_err_pkt_num")

    @property
    def error_counters(self) -> tuple[tuple[str, int], ...]:
        """Non-zero counters whose name says error or drop."""
        return tuple(
            (k, v) for k, v in self.counters if v and ("err" in k or "drop" in k or "bad" in k)
        )


@dataclass(frozen=True)
class StatFacts:
    """Packet statistics per device."""

    devices: tuple[DeviceStat, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_COUNTER_RE = re.compile(r"^\s*([A-Za-z][\w.]{0,80})\s*:\s*(\d{1,20})\s*$")


@never_raises(lambda p: StatFacts((), (p,)))
def parse_stat(text: str | bytes) -> StatFacts:
    """Parse `hccn_tool -i N -stat -g` counters (`name:value`)."""
    probs = Problems()
    out: list[DeviceStat] = []
    for c in chunks_for(text, "stat", probs):
        counters: list[tuple[str, int]] = []
        for ln in c.lines:
            m = _COUNTER_RE.match(ln)
            if m:
                counters.append((m.group(1), int(m.group(2))))
            elif ln.strip() and not is_elision(ln) and "statistics" not in ln.lower():
                probs.add(f"device {c.device}: unreadable counter line {ln.strip()[:80]!r}")
        out.append(DeviceStat(c.device, tuple(counters)))
    note_duplicates((d.device for d in out), probs, "stat")
    return StatFacts(tuple(out), probs.result())
