"""Listening TCP sockets from /proc/net/tcp and tcp6, and the socket inodes of a process's fds."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ascend_audit.facts.common import Problems

__all__ = [
    "ListeningSocket",
    "SocketTable",
    "parse_proc_net_tcp",
    "socket_inode",
]

LISTEN = "0A"  # TCP_LISTEN in include/net/tcp_states.h
MAX_ROWS = 200_000
_ROW_RE = re.compile(
    r"^\s*\d+:\s+([0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})\s+"
    r"[0-9A-Fa-f]{8,32}:[0-9A-Fa-f]{4}\s+([0-9A-Fa-f]{2})\s+\S+\s+\S+\s+\S+\s+(\d+)\s+\d+\s+(\d+)"
)
_SOCKET_LINK_RE = re.compile(r"^socket:\[(\d{1,20})\]$")


@dataclass(frozen=True)
class ListeningSocket:
    """One TCP socket in LISTEN state: address, port, owning uid and inode, and its line."""

    address: str
    port: int
    uid: int
    inode: int
    family: str  # "tcp" | "tcp6"
    line: str


@dataclass(frozen=True)
class SocketTable:
    """Listening sockets read from the kernel's tables, with what could not be read."""

    sockets: tuple[ListeningSocket, ...] = ()
    read: tuple[str, ...] = ()  # tables that were read
    problems: tuple[str, ...] = ()


def _ipv4(hexaddr: str) -> str:
    """/proc/net/tcp's address: one 32-bit word in host (little-endian) byte order."""
    b = bytes.fromhex(hexaddr)[::-1]
    return ".".join(str(x) for x in b)


def _ipv6(hexaddr: str) -> str:
    """/proc/net/tcp6's address: four 32-bit words, each in host byte order."""
    import ipaddress

    raw = b"".join(bytes.fromhex(hexaddr[i : i + 8])[::-1] for i in range(0, 32, 8))
    return str(ipaddress.IPv6Address(raw))


def parse_proc_net_tcp(text: str | None, family: str = "tcp") -> SocketTable:
    """Sockets in LISTEN state from the text of /proc/net/tcp (or tcp6); never raises."""
    probs = Problems()
    out: list[ListeningSocket] = []
    if not text or not text.strip():
        return SocketTable((), (), (f"/proc/net/{family} is empty",) if text is not None else ())
    lines = text.splitlines()
    if lines and not lines[0].lstrip().startswith("sl"):
        probs.add(f"/proc/net/{family}: no `sl local_address …` header")
    for n, line in enumerate(lines[1:], 2):
        if n > MAX_ROWS:
            probs.add(f"/proc/net/{family}: more than {MAX_ROWS} rows; the rest not read")
            break
        m = _ROW_RE.match(line)
        if not m:
            if line.strip():
                probs.add(f"/proc/net/{family} line {n} not understood: {line[:80]!r}")
            continue
        addr, port, state, uid, inode = m.groups()
        if state.upper() != LISTEN:
            continue
        try:
            ip = _ipv4(addr) if len(addr) == 8 else _ipv6(addr)
        except ValueError:
            probs.add(f"/proc/net/{family} line {n}: bad address {addr!r}")
            continue
        out.append(ListeningSocket(ip, int(port, 16), int(uid), int(inode), family, line.strip()))
    return SocketTable(tuple(out), (family,), probs.result())


def merge_tables(tables: list[SocketTable]) -> SocketTable:
    """One table of the IPv4 and IPv6 listeners."""
    return SocketTable(
        tuple(s for t in tables for s in t.sockets),
        tuple(r for t in tables for r in t.read),
        tuple(p for t in tables for p in t.problems),
    )


def socket_inode(link: str | None) -> int | None:
    """The inode of a `socket:[12345]` fd link, else None."""
    m = _SOCKET_LINK_RE.match((link or "").strip())
    return int(m.group(1)) if m else None
