"""Host network interfaces: link state and addresses (/proc/net/route, fib_trie, if_inet6)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

__all__ = [
    "Interface",
    "Interfaces",
    "addresses_by_route",
    "parse_if_inet6",
    "parse_proc_net_route",
    "parse_size",
]

MAX_IFACES = 4096
_IF_INET6_RE = re.compile(r"^([0-9a-fA-F]{32})\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S{1,32})$")
_SIZE_RE = re.compile(r"^(\d{1,20})([kKmMgGtT%]?)$")


@dataclass(frozen=True)
class Interface:
    """One interface: its state (`up`, `down`, `unknown`) and the addresses it holds."""

    name: str
    state: str | None
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Interfaces:
    """Every interface seen, where the view came from, and what could not be read."""

    items: tuple[Interface, ...] = ()
    source: str = ""
    addresses_known: bool = False  # per-interface addresses were read (ip -j addr)
    problems: tuple[str, ...] = ()

    def get(self, name: str) -> Interface | None:
        return next((i for i in self.items if i.name == name), None)

    def holding(self, address: str) -> tuple[Interface, ...]:
        """Interfaces that hold an address (compared as IP addresses)."""
        want = _norm_ip(address)
        return tuple(i for i in self.items if want and want in {_norm_ip(a) for a in i.addresses})


def _norm_ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip().split("%", 1)[0]))
    except ValueError:
        return None


def parse_if_inet6(text: str | None) -> dict[str, list[str]]:
    """IPv6 addresses per interface from /proc/net/if_inet6."""
    out: dict[str, list[str]] = {}
    for line in (text or "").splitlines()[: MAX_IFACES * 8]:
        m = _IF_INET6_RE.match(line.strip())
        if m:
            try:
                addr = str(ipaddress.IPv6Address(bytes.fromhex(m.group(1))))
            except ValueError:
                continue
            out.setdefault(m.group(2), []).append(addr)
    return out


def parse_size(text: str, total_bytes: int | None = None) -> int | None:
    """A tmpfs `size=` option in bytes: 64k, 16g, 50% (of total_bytes), a plain byte count."""
    m = _SIZE_RE.match(text.strip())
    if not m:
        return None
    n, unit = int(m.group(1)), m.group(2).lower()
    if unit == "%":
        return total_bytes * n // 100 if total_bytes else None
    return n * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[unit]


def parse_proc_net_route(text: str | None) -> list[tuple[str, int, int]]:
    """(interface, network, mask) of the directly connected IPv4 routes in /proc/net/route."""
    out: list[tuple[str, int, int]] = []
    for line in (text or "").splitlines()[1 : MAX_IFACES * 16]:
        parts = line.split()
        if len(parts) < 8:
            continue
        try:
            dest = int.from_bytes(bytes.fromhex(parts[1]), "little")
            gateway = int(parts[2], 16)
            mask = int.from_bytes(bytes.fromhex(parts[7]), "little")
        except ValueError:
            continue
        if gateway == 0 and mask:
            out.append((parts[0][:32], dest, mask))
    return out


def addresses_by_route(
    local: list[str] | tuple[str, ...], routes: list[tuple[str, int, int]]
) -> dict[str, list[str]]:
    """Each local IPv4 address on the interface whose connected route (longest mask) holds it."""
    out: dict[str, list[str]] = {}
    for addr in local:
        try:
            n = int(ipaddress.IPv4Address(addr))
        except ValueError:
            continue
        best = None
        for iface, net, mask in routes:
            if n & mask == net & mask and (best is None or mask > best[1]):
                best = (iface, mask)
        if best is not None:
            out.setdefault(best[0], []).append(addr)
    return out
