"""The rank table model: devices, servers, super pods, and the scalar readings every part shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import to_jsonable as _jsonable

MAX_PROBLEMS = 200  # findings kept per table, parse and consistency together


@dataclass(frozen=True)
class RankDevice:
    """One device (rank) entry of a rank table; values kept as the strings the file holds."""

    device_id: str | None
    device_ip: str | None
    rank_id: str | None  # as written; None in the group_list and P/D layouts
    server_id: str | None = None
    super_device_id: str | None = None
    super_pod_id: str | None = None
    device_port: str | None = None
    backup_device_ip: str | None = None
    backup_device_port: str | None = None
    host_port: str | None = None
    cluster_id: str | None = None  # P/D layout (1-based)
    role: str | None = None  # "prefill" | "decode" in the P/D layout
    index: int = 0  # position in the table (rank order for layouts without rank_id)

    @property
    def rank(self) -> int | None:
        """rank_id as an integer (None when absent or not an integer)."""
        return as_int(self.rank_id)


@dataclass(frozen=True)
class RankServer:
    """One server (or legacy instance) with its devices in file order."""

    server_id: str | None
    devices: tuple[RankDevice, ...]
    host_ip: str | None = None
    container_ip: str | None = None
    hardware_type: str | None = None
    pod_name: str | None = None
    group_name: str | None = None
    super_pod_id: str | None = None


@dataclass(frozen=True)
class SuperPod:
    """A super pod of a v1.2 table and the server ids it lists."""

    super_pod_id: str | None
    server_ids: tuple[str, ...]


@dataclass(frozen=True)
class RankTable:
    """A parsed rank table; `layout` says which of the known formats it is."""

    layout: str  # "server_list" | "group_list" | "pd" | "rank_list" | "unknown" | "invalid"
    version: str | None
    status: str | None
    server_count: str | None  # as written
    servers: tuple[RankServer, ...]
    super_pods: tuple[SuperPod, ...] = ()
    group_count: str | None = None
    groups: tuple[tuple[str | None, str | None, str | None], ...] = ()  # name, inst, dev count
    rank_count: str | None = None  # version 2.0
    had_comments: bool = False
    problems: tuple[str, ...] = ()  # parse problems (see problems_of for consistency)

    @property
    def devices(self) -> tuple[RankDevice, ...]:
        """All devices in file order."""
        return tuple(d for s in self.servers for d in s.devices)

    @property
    def size(self) -> int:
        return sum(len(s.devices) for s in self.servers)

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


def as_int(value: Any) -> int | None:
    """A non-negative integer as written (int, or a short digit string); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        v = value.strip()
        if v.isascii() and v.isdigit() and len(v) <= 18:
            return int(v)
    return None


def as_str(value: Any) -> str | None:
    """A scalar as the string a rank table means by it (None for absent/containers)."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def devices_of_server(table: RankTable, server_ip_or_id: str) -> tuple[RankDevice, ...]:
    """Devices of the server whose server_id, host_ip or container_ip equals the argument."""
    key = (server_ip_or_id or "").strip()
    if not key:
        return ()
    for s in table.servers:
        if key in (s.server_id, s.host_ip, s.container_ip):
            return s.devices
    return ()
