"""/etc/hccn.conf: the per-device address, netmask, gateway and detect settings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, split_lines, to_jsonable
from ascend_audit.facts.hccn.base import is_elision, is_ipv4, never_raises

# ---------------------------------------------------------------------------------------------
# /etc/hccn.conf


@dataclass(frozen=True)
class HccnConfDevice:
    """Persistent RoCE settings of one device from /etc/hccn.conf."""

    device: int
    address: str | None = None
    netmask: str | None = None
    netdetect: str | None = None
    gateway: str | None = None
    send_arp_status: str | None = None
    tls_enable: str | None = None
    other: tuple[tuple[str, str], ...] = ()  # other `<key>_N` settings, e.g. xsfp_reset_*

    def get(self, key: str) -> str | None:
        """Any setting of this device by its key without the `_N` suffix."""
        if key in _CONF_KNOWN:
            return getattr(self, key)
        for k, v in self.other:
            if k == key:
                return v
        return None


@dataclass(frozen=True)
class HccnConf:
    """/etc/hccn.conf: per-device settings (sorted by device) and keys without a device."""

    devices: tuple[HccnConfDevice, ...]
    global_keys: tuple[tuple[str, str], ...] = ()
    elided: bool = False
    problems: tuple[str, ...] = ()

    def device(self, n: int) -> HccnConfDevice | None:
        """Settings of device n (None when the file does not mention it)."""
        for d in self.devices:
            if d.device == n:
                return d
        return None

    def addresses(self) -> dict[int, str]:
        """address_N of every device that has one."""
        return {d.device: d.address for d in self.devices if d.address}

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


_CONF_KNOWN = ("address", "netmask", "netdetect", "gateway", "send_arp_status", "tls_enable")
_CONF_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]{0,80}?)_(\d{1,4})\s*=\s*(.*?)\s*$")
_CONF_GLOBAL_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_.]{0,80})\s*=\s*(.*?)\s*$")


@never_raises(lambda p: HccnConf((), (), False, (p,)))
def parse_hccn_conf(text: str | bytes) -> HccnConf:
    """Parse /etc/hccn.conf (`address_0=...`, `netmask_0=...`, any order, unknown keys kept)."""
    probs = Problems()
    per: dict[int, dict[str, str]] = {}
    other: dict[int, dict[str, str]] = {}
    glob: list[tuple[str, str]] = []
    elided = False
    for i, ln in enumerate(split_lines(text), 1):
        s = ln.strip()
        if not s or s.startswith("#") or s.startswith("$ ") or s.startswith("cat "):
            continue
        if is_elision(s):
            elided = True
            continue
        m = _CONF_RE.match(s)
        if m:
            key, dev, val = m.group(1), int(m.group(2)), m.group(3)
            bucket = per if key in _CONF_KNOWN else other
            slot = bucket.setdefault(dev, {})
            if key in slot and slot[key] != val:
                probs.add(f"line {i}: {key}_{dev} set twice ({slot[key]!r}, then {val!r})")
            slot[key] = val
            is_addr = key in ("address", "netmask", "netdetect", "gateway")
            if is_addr and not is_ipv4(val) and ":" not in val:
                probs.add(f"line {i}: {key}_{dev}={val!r} is not an IP address")
            continue
        g = _CONF_GLOBAL_RE.match(s)
        if g:
            glob.append((g.group(1), g.group(2)))
            continue
        probs.add(f"line {i}: not a key=value line: {s[:80]!r}")
    devices = []
    for dev in sorted(set(per) | set(other)):
        known = per.get(dev, {})
        devices.append(
            HccnConfDevice(
                dev,
                address=known.get("address"),
                netmask=known.get("netmask"),
                netdetect=known.get("netdetect"),
                gateway=known.get("gateway"),
                send_arp_status=known.get("send_arp_status"),
                tls_enable=known.get("tls_enable"),
                other=tuple(sorted(other.get(dev, {}).items())),
            )
        )
    for d in devices:
        if d.address and not d.netmask:
            probs.add(f"device {d.device}: address without netmask")
    return HccnConf(tuple(devices), tuple(glob), elided, probs.result())
