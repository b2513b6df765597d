"""Facts of the host resources a serving deployment needs: /dev/shm, ports, NICs, Ray."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ascend_audit.facts.keys import FactKey
from ascend_audit.facts.netif import Interfaces
from ascend_audit.facts.network import RankTableInput, ServingEnv
from ascend_audit.facts.sockets import SocketTable
from ascend_audit.host.base import CommandResult

IFNAME_VARS = ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME")
ADDRESS_VARS = ("HCCL_IF_IP", "VLLM_HOST_IP")


@dataclass(frozen=True)
class ShmMount:
    """/dev/shm as the serving process (or the auditor) sees it."""

    found: bool
    size_bytes: int | None
    how: str  # "size=64k" | "tmpfs default (half of MemTotal)" | …
    line: str
    source: str  # the mount table read
    fstype: str = ""


@dataclass(frozen=True)
class PlannedPort:
    """A port the service will bind, and who said so."""

    port: int
    what: str  # "vLLM --port" | "HCCL host port (HCCL_IF_BASE_PORT 60000 + 3)" | …
    origin: str


@dataclass(frozen=True)
class SocketOwner:
    """The process holding a socket inode: pid and name, or why it is unknown."""

    pid: int
    comm: str
    cmdline: str = ""


@dataclass(frozen=True)
class PortScan:
    """Listening sockets, the ports the service wants, and the owners found for those in use."""

    table: SocketTable
    planned: tuple[PlannedPort, ...]
    owners: dict[int, SocketOwner] = field(default_factory=dict)  # inode -> owner
    unreadable_pids: int = 0
    serving_pids: tuple[int, ...] = ()


@dataclass(frozen=True)
class NetView:
    """The host's interfaces, from `ip -j addr` or sysfs plus fib_trie's local addresses."""

    interfaces: Interfaces
    local_addresses: tuple[str, ...] = ()
    evidence_source: str = ""
    excerpt: str = ""


@dataclass(frozen=True)
class RayView:
    """`ray status`: NPUs the cluster offers, or why it was not asked."""

    asked: bool
    reason: str = ""
    launch: str | None = None  # where the Ray launch shows, None when there is none
    result: CommandResult | None = None
    npu_total: float | None = None
    npu_used: float | None = None


SHM_MOUNT: FactKey[ShmMount] = FactKey("shm_mount")
PORT_SCAN: FactKey[PortScan] = FactKey("port_scan")
NET_VIEW: FactKey[NetView] = FactKey("net_view")
RAY_VIEW: FactKey[RayView] = FactKey("ray_view")


def as_int(v: Any) -> int | None:
    """An int from an int or a digit string (argv and YAML give either), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def service_env_of(senv: ServingEnv, configs: Iterable[Any]) -> tuple[dict[str, str], str]:
    """The service's environment: the serving process's, else the configs', else the audit's."""
    if senv.pid is not None:
        return dict(senv.env), senv.origin
    merged: dict[str, str] = {}
    where = ""
    for cfg in configs:
        if cfg.env:
            merged.update(cfg.env)
            where = where or f"{cfg.source} environ"
    if merged:
        return {**senv.env, **merged}, where
    return dict(senv.env), senv.origin


def multinode_signals_of(rt: RankTableInput | None, configs: Iterable[Any]) -> list[str]:
    """Why a deployment spans nodes: rank table, vLLM flags, MindIE multiNodesInferEnabled."""
    out: list[str] = []
    if rt is not None and rt.table is not None and len(rt.table.servers) > 1:
        out.append(f"rank table {rt.path} lists {len(rt.table.servers)} servers")
    for cfg in configs:
        o = cfg.options
        nn = as_int(o.get("nnodes"))
        if nn and nn > 1:
            out.append(f"{cfg.source}: --nnodes {nn}")
        if o.get("headless") is True:
            out.append(f"{cfg.source}: --headless (a secondary node)")
        dp, dpl = as_int(o.get("data_parallel_size")), as_int(o.get("data_parallel_size_local"))
        if dp and dpl and dpl < dp:
            out.append(f"{cfg.source}: data_parallel_size {dp} > data_parallel_size_local {dpl}")
        if o.get("multiNodesInferEnabled") is True:
            out.append(f"{cfg.source}: multiNodesInferEnabled true")
    return out
