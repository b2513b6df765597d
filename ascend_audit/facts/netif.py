"""Host network interfaces: names, link state and addresses (`ip -j addr`, /proc/net/if_inet6)."""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass

from ascend_audit.facts.common import Problems

__all__ = ["Interface", "Interfaces", "parse_if_inet6", "parse_ip_addr_json", "parse_size"]

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


def parse_ip_addr_json(text: str | None) -> Interfaces:
    """`ip -j addr show`: ifname, operstate and addr_info[].local of each interface."""
    probs = Problems()
    try:
        data = json.loads(text or "")
    except (ValueError, RecursionError) as exc:
        return Interfaces((), "ip -j addr", False, (f"ip -j addr: not JSON ({exc})"[:200],))
    if not isinstance(data, list):
        return Interfaces((), "ip -j addr", False, ("ip -j addr: expected a JSON list",))
    out: list[Interface] = []
    for entry in data[:MAX_IFACES]:
        if not isinstance(entry, dict) or not isinstance(entry.get("ifname"), str):
            probs.add("ip -j addr: an entry without ifname")
            continue
        addrs = []
        for a in entry.get("addr_info") or []:
            if isinstance(a, dict) and isinstance(a.get("local"), str):
                addrs.append(a["local"])
        state = entry.get("operstate")
        out.append(
            Interface(
                entry["ifname"], state.lower() if isinstance(state, str) else None, tuple(addrs)
            )
        )
    return Interfaces(tuple(out), "ip -j addr", True, probs.result())


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
