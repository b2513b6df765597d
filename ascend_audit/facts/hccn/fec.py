"""`hccn_tool -i N -fec -g`: FEC mode per device."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_jsonable
from ascend_audit.facts.hccn.base import never_raises
from ascend_audit.facts.hccn.loops import chunks_for, note_duplicates


@dataclass(frozen=True)
class DeviceFec:
    """FEC mode of one device port."""

    device: int | None
    mode: str | None  # "rs" | "no" | "auto" | other first word
    raw: str | None


@dataclass(frozen=True)
class FecFacts:
    """FEC mode per device."""

    devices: tuple[DeviceFec, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_FEC_RE = re.compile(r"^\s*fec mode\s*:\s*(.*?)\s*$", re.IGNORECASE)


@never_raises(lambda p: FecFacts((), (p,)))
def parse_fec(text: str | bytes) -> FecFacts:
    """Parse `hccn_tool -i N -fec -g` (`fec mode: rs FEC mode` / `no FEC mode` / `auto`)."""
    probs = Problems()
    out: list[DeviceFec] = []
    for c in chunks_for(text, "fec", probs):
        raw = None
        for ln in c.lines:
            m = _FEC_RE.match(ln)
            if m:
                raw = m.group(1)
                break
        mode = raw.split()[0].lower() if raw else None
        if raw is None:
            probs.add(f"device {c.device}: no `fec mode:` line")
        out.append(DeviceFec(c.device, mode, raw))
    note_duplicates((d.device for d in out), probs, "fec")
    return FecFacts(tuple(out), probs.result())
