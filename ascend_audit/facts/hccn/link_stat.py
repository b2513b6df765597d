"""`hccn_tool -i N -link_stat -g`: link up/down history per device."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ascend_audit.facts.common import Problems, to_int, to_jsonable
from ascend_audit.facts.hccn.base import never_raises
from ascend_audit.facts.hccn.loops import DeviceChunk, chunks_for, key_value, note_duplicates

# ---------------------------------------------------------------------------------------------
# -link_stat -g


@dataclass(frozen=True)
class LinkRecord:
    """One link change record (newest first in the tool's output)."""

    time: str
    when: datetime | None
    state: str  # "UP" | "DOWN"


@dataclass(frozen=True)
class DeviceLinkStat:
    """Link flap history of one device."""

    device: int | None
    current_time: str | None
    now: datetime | None
    link_up_count: int | None
    link_down_count: int | None
    records: tuple[LinkRecord, ...]  # newest first, as printed

    @property
    def last_state(self) -> str | None:
        """State of the newest record (None when there are no records)."""
        return self.records[0].state if self.records else None

    @property
    def down_records(self) -> int:
        return sum(1 for r in self.records if r.state == "DOWN")

    def downs_within(self, seconds: float) -> int:
        """DOWN records newer than `seconds` before the device's current time."""
        if self.now is None:
            return 0
        n = 0
        for r in self.records:
            if r.state == "DOWN" and r.when is not None:
                age = (self.now - r.when).total_seconds()
                if -60 <= age <= seconds:
                    n += 1
        return n


@dataclass(frozen=True)
class LinkStatFacts:
    """Link statistics per device."""

    devices: tuple[DeviceLinkStat, ...]
    problems: tuple[str, ...] = ()

    @property
    def ending_down(self) -> tuple[DeviceLinkStat, ...]:
        return tuple(d for d in self.devices if d.last_state == "DOWN")

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_LS_PREFIX_RE = re.compile(r"^\s*\[(?:devid|device)\s+(\d{1,4})\]")
_LS_RECORD_RE = re.compile(
    r"^\s*(\w{3}\s+\w{3}\s+\d{1,2}\s+\d{1,2}:\d{2}:\d{2}\s+\d{4})\s+LINK\s+(\w+)"
)


def _asctime(text: str) -> datetime | None:
    try:
        return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None


def _link_stat_device(c: DeviceChunk, probs: Problems) -> DeviceLinkStat:
    cur_time = None
    up = down = None
    records: list[LinkRecord] = []
    dev = c.device
    for ln in c.lines:
        m = _LS_PREFIX_RE.match(ln)
        body = ln[m.end() :] if m else ln
        if m and dev is None:
            dev = int(m.group(1))
        r = _LS_RECORD_RE.match(body)
        if r:
            state = r.group(2).upper()
            if state not in ("UP", "DOWN"):
                probs.add(f"device {dev}: unknown link record state {state!r}")
            when = _asctime(r.group(1))
            if when is None:
                probs.add(f"device {dev}: unreadable record time {r.group(1)!r}")
            records.append(LinkRecord(" ".join(r.group(1).split()), when, state))
            continue
        kv = key_value(body)
        if kv is None:
            continue
        k = " ".join(kv[0].lower().split())
        if k == "current time":
            cur_time = kv[1]
        elif k == "link up count":
            up = to_int(kv[1])
        elif k == "link down count":
            down = to_int(kv[1])
    now = _asctime(cur_time) if cur_time else None
    if cur_time is None and not records:
        probs.add(f"device {dev}: no link_stat data")
    prev: datetime | None = None
    for rec in records:
        if rec.when is not None and prev is not None and rec.when > prev:
            probs.add(f"device {dev}: link records are not newest-first")
            break
        prev = rec.when if rec.when is not None else prev
    return DeviceLinkStat(dev, cur_time, now, up, down, tuple(records))


@never_raises(lambda p: LinkStatFacts((), (p,)))
def parse_link_stat(text: str | bytes) -> LinkStatFacts:
    """Parse `hccn_tool -i N -link_stat -g`: counts and newest-first LINK UP/DOWN records."""
    probs = Problems()
    out = [_link_stat_device(c, probs) for c in chunks_for(text, "link_stat", probs)]
    note_duplicates((d.device for d in out), probs, "link_stat")
    return LinkStatFacts(tuple(out), probs.result())
