"""`hccn_tool -i N -ip -g`: RoCE addresses and netmasks per device."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems, to_int, to_jsonable
from ascend_audit.facts.hccn.base import is_ipv4, never_raises, prefix_len
from ascend_audit.facts.hccn.loops import chunks_for, error_of, key_value, note_duplicates

# ---------------------------------------------------------------------------------------------
# -ip -g


@dataclass(frozen=True)
class IpAddress:
    """One address of a device port: IPv4 with netmask, or IPv6 with prefix length."""

    address: str
    netmask: str | None = None
    prefix_len: int | None = None
    family: str = "ipv4"


@dataclass(frozen=True)
class DeviceIp:
    """Addresses of one device (empty when none is configured)."""

    device: int | None
    addresses: tuple[IpAddress, ...]
    error: str | None = None

    @property
    def ipaddr(self) -> str | None:
        return self.addresses[0].address if self.addresses else None

    @property
    def netmask(self) -> str | None:
        return self.addresses[0].netmask if self.addresses else None


@dataclass(frozen=True)
class IpFacts:
    """Device RoCE addresses."""

    devices: tuple[DeviceIp, ...]
    problems: tuple[str, ...] = ()

    def by_device(self) -> dict[int, DeviceIp]:
        """Devices with a known number, keyed by it."""
        return {d.device: d for d in self.devices if d.device is not None}

    @property
    def without_ip(self) -> tuple[DeviceIp, ...]:
        return tuple(d for d in self.devices if not d.addresses)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


def ip_pairs(lines: Iterable[str], probs: Problems, dev: int | None) -> list[IpAddress]:
    addrs: list[IpAddress] = []
    pending: str | None = None
    family = "ipv4"

    def flush(mask: str | None = None, plen: int | None = None) -> None:
        nonlocal pending
        if pending is not None:
            if family == "ipv4" and not is_ipv4(pending):
                probs.add(f"device {dev}: ipaddr {pending!r} is not a valid IPv4 address")
            if family == "ipv4" and plen is None:
                plen = prefix_len(mask)
                if mask is not None and plen is None:
                    probs.add(f"device {dev}: netmask {mask!r} is not a valid mask")
            addrs.append(IpAddress(pending, mask, plen, family))
            pending = None

    for ln in lines:
        kv = key_value(ln)
        if kv is None:
            continue
        k, v = kv[0].lower(), kv[1]
        if k in ("ipaddr", "ipv6_address", "vnic ipaddr"):
            flush()
            pending, family = v, "ipv6" if k == "ipv6_address" else "ipv4"
        elif k in ("netmask", "vnic netmask"):
            if pending is None:
                probs.add(f"device {dev}: netmask without ipaddr")
            else:
                flush(mask=v)
        elif k == "prefix_length" and pending is not None:
            flush(plen=to_int(v))
    flush()
    return addrs


@never_raises(lambda p: IpFacts((), (p,)))
def parse_ip(text: str | bytes) -> IpFacts:
    """Parse `hccn_tool -i N -ip -g` (and `-ip -inet6 -g`) output, single or looped."""
    probs = Problems()
    out: list[DeviceIp] = []
    for c in chunks_for(text, "ip", probs):
        addrs = ip_pairs(c.lines, probs, c.device)
        err = error_of(c.lines)
        if not addrs and err is None:
            err = "no ipaddr printed (no IP configured, or the error went to stderr)"
        out.append(DeviceIp(c.device, tuple(addrs), err))
    note_duplicates((d.device for d in out), probs, "ip")
    return IpFacts(tuple(out), probs.result())
