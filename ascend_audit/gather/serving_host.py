"""Host resources a serving deployment needs: /dev/shm, free ports, named NICs, multi-node hints.

Everything is read through the Host: the mount table of the serving process (or our own),
/proc/net/tcp{,6}, the fd links of processes that own a listening socket on a wanted port,
/sys/class/net with /proc/net/fib_trie, route and if_inet6, and `ray status` for Ray launches.
"""

from __future__ import annotations

import posixpath
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.framework_inputs import SERVING_CONFIGS
from ascend_audit.facts.netif import (
    Interface,
    Interfaces,
    addresses_by_route,
    parse_if_inet6,
    parse_proc_net_route,
    parse_size,
)
from ascend_audit.facts.network import LOCAL_ADDRESSES, SERVING_ENV
from ascend_audit.facts.serving_host import (
    NET_VIEW,
    PORT_SCAN,
    RAY_VIEW,
    SHM_MOUNT,
    NetView,
    PlannedPort,
    PortScan,
    RayView,
    ShmMount,
    SocketOwner,
    as_int,
    service_env_of,
)
from ascend_audit.facts.sockets import SocketTable, merge_tables, parse_proc_net_tcp, socket_inode
from ascend_audit.host.base import FileRead, ProcessInfo

RAY_STATUS = ("ray", "status")
HCCL_BASE_PORT = 60000  # HCCL_IF_BASE_PORT default (CANN env reference, HCCL_IF_BASE_PORT)
VLLM_PORT = 8000  # vllm serve --port default
MAX_PIDS = 4096
MAX_FDS = 65536
_MINDIE_PORTS = ("port", "managementPort", "metricsPort", "interCommPort")


# ---------------------------------------------------------------------------------------------
# helpers


def serving_process(ctx: Context) -> ProcessInfo | None:
    """The first running vLLM / MindIE process (none on a fake node or a bare snapshot)."""
    from ascend_audit.gather.framework import serving_processes

    procs = serving_processes(ctx)
    return procs[0] if procs else None


def _configs(ctx: Context) -> list[Any]:
    try:
        return list(ctx.fact(SERVING_CONFIGS).configs)
    except Exception:
        return []


def service_env(ctx: Context) -> tuple[dict[str, str], str]:
    """The service's environment (see service_env_of)."""
    return service_env_of(ctx.fact(SERVING_ENV), _configs(ctx))


# ---------------------------------------------------------------------------------------------
# /dev/shm


@gatherer(SHM_MOUNT, "driver")
def shm_mount(ctx: Context) -> ShmMount:
    """The /dev/shm mount in the serving process's mount namespace (else ours) and its size."""
    from ascend_audit.gather.storage import read_mounts

    proc = serving_process(ctx)
    mounts = read_mounts(ctx, proc.pid if proc else None)
    src = mounts.read.path
    m = mounts.table.at("/dev/shm")
    if m is None:
        return ShmMount(False, None, "no mount at /dev/shm", "", src)
    line = f"{m.source} /dev/shm {m.fstype} {','.join(m.options + m.super_options)}"
    opts = [o for o in (*m.super_options, *m.options) if o.startswith("size=")]
    total = _mem_total(ctx)
    if opts:
        raw = opts[-1][5:]
        return ShmMount(True, parse_size(raw, total), f"size={raw}", line, src, m.fstype)
    if m.fstype == "tmpfs":
        half = total // 2 if total else None
        return ShmMount(True, half, "tmpfs default size (half of MemTotal)", line, src, m.fstype)
    return ShmMount(True, None, f"{m.fstype} without a size option", line, src, m.fstype)


def _mem_total(ctx: Context) -> int | None:
    import re

    r = ctx.host.read_text("/proc/meminfo")
    m = re.search(r"^MemTotal:\s+(\d+)\s*kB", r.text or "", re.MULTILINE)
    return int(m.group(1)) * 1024 if m else None


# ---------------------------------------------------------------------------------------------
# ports


def planned_ports(ctx: Context, env: dict[str, str], origin: str) -> list[PlannedPort]:
    """Ports the service binds: the serving configs' ports, policy's, and HCCL's host range."""
    out: list[PlannedPort] = []
    for cfg in _configs(ctx):
        if cfg.engine == "vllm":
            port = as_int(cfg.options.get("port"))
            what = "vLLM --port" if port is not None else f"vLLM --port (default {VLLM_PORT})"
            out.append(PlannedPort(port if port is not None else VLLM_PORT, what, cfg.source))
        elif cfg.engine == "mindie":
            for key in _MINDIE_PORTS:
                port = as_int(cfg.options.get(key))
                if port is not None:
                    out.append(PlannedPort(port, f"MindIE ServerConfig.{key}", cfg.source))
    want = ctx.policy.get("host.service_port")
    if want:
        out.append(PlannedPort(int(want), "policy host.service_port", "policy"))
    raw = env.get("HCCL_IF_BASE_PORT")
    base = as_int(raw) if raw else None
    span = int(ctx.policy.get("host.hccl_port_span") or 32)
    start = base if base is not None else HCCL_BASE_PORT
    label = f"HCCL_IF_BASE_PORT={raw}" if base is not None else f"HCCL default base {start}"
    for i in range(span):
        out.append(PlannedPort(start + i, f"HCCL host port ({label} + {i})", origin))
    seen: set[int] = set()
    uniq = []
    for p in out:
        if p.port not in seen and 0 < p.port < 65536:
            seen.add(p.port)
            uniq.append(p)
    return uniq


def _pids(ctx: Context) -> list[int]:
    names = ctx.host.listdir("/proc", limit=MAX_PIDS + 512) or []  # + /proc's own entries
    return sorted(int(n) for n in names if n.isdigit())[:MAX_PIDS]


def find_owners(ctx: Context, inodes: set[int]) -> tuple[dict[int, SocketOwner], int]:
    """Owners of socket inodes from /proc/*/fd links (bounded); and how many fd dirs were shut."""
    owners: dict[int, SocketOwner] = {}
    unreadable = 0
    budget = MAX_FDS
    procs = {}
    try:
        procs = {p.pid: p for p in ctx.host.processes()}
    except Exception:
        procs = {}
    for pid in _pids(ctx):
        if not inodes - set(owners) or budget <= 0:
            break
        fds = ctx.host.listdir(f"/proc/{pid}/fd", limit=budget)
        if fds is None:
            unreadable += 1
            continue
        for fd in fds[:budget]:
            budget -= 1
            ino = socket_inode(ctx.host.readlink(f"/proc/{pid}/fd/{fd}"))
            if ino is not None and ino in inodes and ino not in owners:
                comm = (ctx.host.read_text(f"/proc/{pid}/comm").text or "").strip()[:64]
                p = procs.get(pid)
                cmd = " ".join(p.cmdline)[:200] if p else ""
                owners[ino] = SocketOwner(pid, comm or "?", cmd)
    return owners, unreadable


@gatherer(PORT_SCAN, "driver")
def port_scan(ctx: Context) -> PortScan:
    """Listening TCP sockets, the ports the service will bind, owners of the ones in use."""
    from ascend_audit.gather.framework import serving_processes

    tables = []
    for fam in ("tcp", "tcp6"):
        r = ctx.host.read_text(f"/proc/net/{fam}")
        if r.ok:
            tables.append(parse_proc_net_tcp(r.text, fam))
    table = merge_tables(tables) if tables else SocketTable((), (), ("/proc/net/tcp unreadable",))
    env, origin = service_env(ctx)
    planned = planned_ports(ctx, env, origin)
    wanted = {p.port for p in planned}
    inodes = {s.inode for s in table.sockets if s.port in wanted and s.inode}
    owners, unreadable = find_owners(ctx, inodes) if inodes else ({}, 0)
    pids = tuple(p.pid for p in serving_processes(ctx))
    return PortScan(table, tuple(planned), owners, unreadable, pids)


# ---------------------------------------------------------------------------------------------
# interfaces


@gatherer(NET_VIEW, "driver")
def net_view(ctx: Context) -> NetView:
    """Interfaces with state and IPv4/IPv6 addresses, from files only (sysroot- and
    snapshot-safe): /sys/class/net/*/operstate, /proc/net/fib_trie's local addresses placed
    on interfaces by /proc/net/route's connected routes, and /proc/net/if_inet6."""
    local = ctx.fact(LOCAL_ADDRESSES)
    route = ctx.host.read_text("/proc/net/route")
    inet6 = ctx.host.read_text("/proc/net/if_inet6")
    by_iface = addresses_by_route(list(local.addresses), parse_proc_net_route(route.text))
    for name, addrs in parse_if_inet6(inet6.text).items():
        by_iface.setdefault(name, []).extend(addrs)
    items = []
    lines = []
    for name in ctx.host.listdir("/sys/class/net") or []:
        st: FileRead = ctx.host.read_text(f"/sys/class/net/{name}/operstate")
        state = (st.text or "").strip().lower() or None
        held = tuple(by_iface.get(name, ()))
        items.append(Interface(name, state, held))
        lines.append(f"{name} {state or '?'} {' '.join(held)}".rstrip())
    known = route.ok and bool(local.addresses)
    problems = () if known else ("/proc/net/route or fib_trie unreadable: addresses not placed",)
    ifs = Interfaces(tuple(items), "/sys/class/net + /proc/net/route", known, problems)
    src = "/sys/class/net/*/operstate, /proc/net/fib_trie, /proc/net/route, /proc/net/if_inet6"
    return NetView(ifs, tuple(local.addresses), src, "\n".join(lines))


# ---------------------------------------------------------------------------------------------
# multi-node and Ray


def ray_launch(ctx: Context) -> str | None:
    """Where a Ray launch shows: --distributed-executor-backend ray, or a `ray` command line."""
    for cfg in _configs(ctx):
        if str(cfg.options.get("distributed_executor_backend") or "").lower() == "ray":
            return f"{cfg.source}: --distributed-executor-backend ray"
    proc = serving_process(ctx)
    if proc is not None and any(posixpath.basename(a) == "ray" for a in proc.cmdline[:2]):
        return f"process {proc.pid}: {' '.join(proc.cmdline)[:80]}"
    return None


def parse_ray_npus(text: str) -> tuple[float | None, float | None]:
    """(used, total) NPUs from `ray status`'s Resources block: ` 0.0/16.0 NPU`."""
    import re

    m = re.search(r"^\s*([\d.]+)/([\d.]+)\s+NPU\s*$", text or "", re.MULTILINE)
    if not m:
        return None, None
    try:
        return float(m.group(1)), float(m.group(2))
    except ValueError:
        return None, None


@gatherer(RAY_VIEW, "driver")
def ray_view(ctx: Context) -> RayView:
    """`ray status` when the service launches through Ray and `ray` is on PATH."""
    why = ray_launch(ctx)
    if why is None:
        return RayView(False, "no Ray launch seen (no --distributed-executor-backend ray)")
    if ctx.host.which("ray") is None:
        return RayView(False, f"{why}, but `ray` is not on PATH", why)
    res = ctx.host.run(list(RAY_STATUS), ctx.timeout)
    used, total = parse_ray_npus(res.stdout) if res.ok else (None, None)
    return RayView(True, why, why, res, total, used)


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """/dev/shm size, when read."""
    shm: ShmMount | None = facts.get(SHM_MOUNT.name)
    if shm is None or not shm.found:
        return {}
    return {"serving_host": {"shm_bytes": shm.size_bytes, "shm_how": shm.how}}
