"""`hccn_tool -i N -optical -g`: optical module power, bias, temperature and alarms."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_jsonable
from ascend_audit.facts.hccn.base import NA_VALUES, is_elision, never_raises
from ascend_audit.facts.hccn.loops import (
    DeviceChunk,
    chunks_for,
    error_of,
    key_value,
    note_duplicates,
)

# ---------------------------------------------------------------------------------------------
# -optical -g


@dataclass(frozen=True)
class OpticalModule:
    """One transceiver: presence, per-lane power, thresholds, LOS/LoL flags, alarms."""

    device: int | None
    present: bool | None
    fields: tuple[tuple[str, str], ...]  # every `label : value` line, in order
    temperature_c: float | None
    vcc_mv: float | None
    tx_power_mw: tuple[float | None, ...]  # per lane (one entry for single-value layouts)
    rx_power_mw: tuple[float | None, ...]
    tx_power_thresholds: tuple[float | None, float | None]  # (low, high)
    rx_power_thresholds: tuple[float | None, float | None]
    temp_thresholds: tuple[float | None, float | None]
    tx_los: int | None
    rx_los: int | None
    tx_lol: int | None
    rx_lol: int | None
    vendor: str | None
    part_number: str | None
    alarms: tuple[str, ...]  # readiness findings (not present, power out of range, LOS/LoL)

    def field(self, label: str) -> str | None:
        """Value of a label (case-insensitive, spaces collapsed), last one wins."""
        want = " ".join(label.lower().split())
        found = None
        for k, v in self.fields:
            if " ".join(k.lower().split()) == want:
                found = v
        return found


@dataclass(frozen=True)
class OpticalFacts:
    """Optical modules per device."""

    devices: tuple[OpticalModule, ...]
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_NUM_UNIT_RE = re.compile(r"^\s*([-+]?\d{1,12}(?:\.\d{1,12})?)\s*[A-Za-z]*\s*$")
_FLAG_RE = re.compile(r"^\s*0x([0-9a-fA-F]{1,8})\s*$")
_FLAG_LABELS = {"tx los": "Tx LOS", "rx los": "Rx LOS", "tx lol": "Tx LoL", "rx lol": "Rx LoL"}
_LANE_RE = re.compile(r"^(tx power|rx power|tx bias)\s*(\d?)$")


def _num(value: str | None) -> float | None:
    if value is None or value.strip() in NA_VALUES:
        return None
    m = _NUM_UNIT_RE.match(value)
    return float(m.group(1)) if m else None


def _flag(value: str | None) -> int | None:
    if value is None:
        return None
    m = _FLAG_RE.match(value)
    return int(m.group(1), 16) if m else None


def _optical_module(c: DeviceChunk, probs: Problems) -> OpticalModule:
    fields: list[tuple[str, str]] = []
    for ln in c.lines:
        if is_elision(ln) or ln.strip().lower().startswith("optical info"):
            continue
        kv = key_value(ln)
        if kv and kv[0]:
            fields.append(kv)
    d: dict[str, str] = {}
    lanes: dict[str, dict[int, str]] = {"tx power": {}, "rx power": {}}
    numbered = {"tx power": False, "rx power": False}
    for k, v in fields:
        key = " ".join(k.lower().split())
        d[key] = v
        m = _LANE_RE.match(key)
        if m and m.group(1) in lanes:
            lanes[m.group(1)][int(m.group(2) or 0)] = v
            numbered[m.group(1)] = numbered[m.group(1)] or bool(m.group(2))

    def lane_vals(name: str) -> tuple[float | None, ...]:
        vals = lanes[name]
        if not vals:
            return ()
        return tuple(_num(vals.get(i)) for i in range(max(vals) + 1))

    present_raw = d.get("present")
    present: bool | None = None
    if present_raw is not None:
        pr = present_raw.strip().lower()
        present = False if pr.startswith("not") else True if pr == "present" else None
        if present is None:
            probs.add(f"device {c.device}: unexpected `present` value {present_raw!r}")
    tx = lane_vals("tx power")
    rx = lane_vals("rx power")
    tx_thr = (_num(d.get("txpower low thres")), _num(d.get("txpower high thres")))
    rx_thr = (_num(d.get("rxpower low thres")), _num(d.get("rxpower high thres")))
    t_thr = (_num(d.get("temp low thres")), _num(d.get("temp high thres")))
    temp = _num(d.get("temperature"))
    flags = {n: _flag(d.get(f"{n} flag")) for n in ("tx los", "rx los", "tx lol", "rx lol")}
    for n in flags:
        raw = d.get(f"{n} flag")
        if raw is not None and flags[n] is None and raw.strip() not in NA_VALUES:
            probs.add(f"device {c.device}: unreadable {n} flag {raw!r}")

    alarms: list[str] = []
    if present is False:
        alarms.append("optical module not present")
    for label, vals, (lo, hi) in (("Tx Power", tx, tx_thr), ("Rx Power", rx, rx_thr)):
        for i, mw in enumerate(vals):
            if mw is None:
                continue
            lane = f"{label}{i}" if numbered[label.lower()] else label
            if lo is not None and mw < lo:
                alarms.append(f"{lane} {mw} mW below low threshold {lo} mW")
            if hi is not None and mw > hi:
                alarms.append(f"{lane} {mw} mW above high threshold {hi} mW")
    if temp is not None and t_thr[1] is not None and temp > t_thr[1]:
        alarms.append(f"temperature {temp} C above high threshold {t_thr[1]} C")
    for n, val in flags.items():
        if val:
            label = _FLAG_LABELS[n]
            what = "loss of signal" if "LOS" in label else "loss of lock"
            alarms.append(f"{label} flag 0x{val:x} ({what})")
    if not fields:
        err = error_of(c.lines)
        alarms.append(f"no optical data ({err})" if err else "no optical data")
    return OpticalModule(
        device=c.device,
        present=present,
        fields=tuple(fields),
        temperature_c=temp,
        vcc_mv=_num(d.get("vcc")),
        tx_power_mw=tx,
        rx_power_mw=rx,
        tx_power_thresholds=tx_thr,
        rx_power_thresholds=rx_thr,
        temp_thresholds=t_thr,
        tx_los=flags["tx los"],
        rx_los=flags["rx los"],
        tx_lol=flags["tx lol"],
        rx_lol=flags["rx lol"],
        vendor=d.get("vendor name"),
        part_number=d.get("vendor part number"),
        alarms=tuple(alarms),
    )


@never_raises(lambda p: OpticalFacts((), (p,)))
def parse_optical(text: str | bytes) -> OpticalFacts:
    """Parse `hccn_tool -i N -optical -g`: presence, lane powers vs thresholds, LOS/LoL."""
    probs = Problems()
    out = [_optical_module(c, probs) for c in chunks_for(text, "optical", probs)]
    note_duplicates((d.device for d in out), probs, "optical")
    return OpticalFacts(tuple(out), probs.result())
