"""`hccn_tool -i N -tls -g`: TLS switch, preconfiguration and certificate dates."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_jsonable
from ascend_audit.facts.hccn.base import never_raises
from ascend_audit.facts.hccn.loops import DeviceChunk, chunks_for, note_duplicates

# ---------------------------------------------------------------------------------------------
# -tls -g


@dataclass(frozen=True)
class TlsCert:
    """One certificate block of `-tls -g`."""

    name: str  # "pub cert", "ca1 cert", ...
    issuer: str | None
    start_time: str | None
    end_time: str | None


@dataclass(frozen=True)
class DeviceTls:
    """TLS switch of one device's RoCE control channel, with its certificates."""

    device: int | None
    switch: int | None  # 0 disabled, 1 enabled
    preconfigured: int | None
    alarm_days: int | None
    certs: tuple[TlsCert, ...]

    @property
    def enabled(self) -> bool | None:
        return None if self.switch is None else self.switch == 1


@dataclass(frozen=True)
class TlsFacts:
    """TLS settings per device."""

    devices: tuple[DeviceTls, ...]
    problems: tuple[str, ...] = ()

    @property
    def switches(self) -> tuple[int, ...]:
        """Distinct switch values seen, sorted."""
        return tuple(sorted({d.switch for d in self.devices if d.switch is not None}))

    @property
    def consistent(self) -> bool:
        return len(self.switches) <= 1

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_TLS_SWITCH_RE = re.compile(r"tls switch\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_TLS_PRE_RE = re.compile(r"tls preconfigured\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_TLS_ALARM_RE = re.compile(r"threshold\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_TLS_CERT_RE = re.compile(r"\[([^\]]{1,40}cert)\]\s*info", re.IGNORECASE)
_BRACKET_RE = re.compile(r"^\s*(issuer|start_time|end_time|subject)\s*\[(.*)\]\s*$")


def _tls_device(c: DeviceChunk, probs: Problems) -> DeviceTls:
    switch = pre = alarm = None
    certs: list[dict[str, str | None]] = []
    for ln in c.lines:
        m = _TLS_SWITCH_RE.search(ln)
        if m:
            switch = int(m.group(1))
            p = _TLS_PRE_RE.search(ln)
            pre = int(p.group(1)) if p else None
            a = _TLS_ALARM_RE.search(ln)
            alarm = int(a.group(1)) if a else None
            continue
        m = _TLS_CERT_RE.search(ln)
        if m:
            certs.append({"name": m.group(1), "issuer": None, "start_time": None, "end_time": None})
            continue
        b = _BRACKET_RE.match(ln)
        if b and certs and b.group(1) in certs[-1]:
            certs[-1][b.group(1)] = b.group(2)
    if switch is None:
        probs.add(f"device {c.device}: no `tls switch[...]` value")
    elif switch not in (0, 1):
        probs.add(f"device {c.device}: unexpected tls switch value {switch}")
    return DeviceTls(
        c.device,
        switch,
        pre,
        alarm,
        tuple(TlsCert(str(x["name"]), x["issuer"], x["start_time"], x["end_time"]) for x in certs),
    )


@never_raises(lambda p: TlsFacts((), (p,)))
def parse_tls(text: str | bytes) -> TlsFacts:
    """Parse `hccn_tool -i N -tls -g` (full or `| grep switch`), old and new layouts."""
    probs = Problems()
    out = [_tls_device(c, probs) for c in chunks_for(text, "tls", probs)]
    note_duplicates((d.device for d in out), probs, "tls")
    res = TlsFacts(tuple(out), probs.result())
    return res
