"""Host resources for serving: /dev/shm, free ports, named NICs, multi-node timeouts, Ray."""

from __future__ import annotations

import ipaddress
from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.framework_inputs import SERVING_CONFIGS
from ascend_audit.facts.network import RANK_TABLE, SERVING_ENV
from ascend_audit.facts.serving_host import (
    ADDRESS_VARS,
    IFNAME_VARS,
    NET_VIEW,
    PORT_SCAN,
    RAY_VIEW,
    SHM_MOUNT,
    multinode_signals_of,
    service_env_of,
)
from ascend_audit.model import Evidence, Outcome, fail, passed, skip, warn, worst
from ascend_audit.registry import check

GIB = 1 << 30


def _configs(ctx: Context) -> list[Any]:
    try:
        return list(ctx.fact(SERVING_CONFIGS).configs)
    except Exception:
        return []


def service_env(ctx: Context) -> tuple[dict[str, str], str]:
    return service_env_of(ctx.fact(SERVING_ENV), _configs(ctx))


def multinode_signals(ctx: Context) -> list[str]:
    try:
        rt = ctx.fact(RANK_TABLE)
    except Exception:
        rt = None
    return multinode_signals_of(rt, _configs(ctx))


def _gib(n: int | None) -> str:
    return "?" if n is None else f"{n / GIB:.2f} GiB"


@check("DRV-SHM-001")
def shm_size(ctx: Context) -> Outcome:
    shm = ctx.fact(SHM_MOUNT)
    ray = ctx.fact(RAY_VIEW)
    ev = [Evidence("file", shm.source, shm.line or shm.how, {"size_bytes": shm.size_bytes})]
    if not shm.found:
        return skip(f"no /dev/shm mount in {shm.source or 'the mount table'}", ev)
    if shm.size_bytes is None:
        return skip(f"/dev/shm size unknown ({shm.how})", ev)
    want = float(ctx.policy["host.min_shm_gib"])
    why = "policy host.min_shm_gib"
    if ray.launch:
        want = max(want, float(ctx.policy["host.ray_min_shm_gib"]))
        why = f"policy host.ray_min_shm_gib: Ray launch ({ray.launch})"
    have = shm.size_bytes
    summary = f"/dev/shm is {_gib(have)} ({shm.how}), want >= {want:g} GiB ({why})"
    if have < want * GIB:
        return fail(summary, ev, size_bytes=have)
    return passed(summary, ev, size_bytes=have)


def _owner_text(scan, sock) -> str:
    o = scan.owners.get(sock.inode)
    if o is None:
        return f"uid {sock.uid}, owner unknown (inode {sock.inode}; fd links unreadable)"
    cmd = f": {o.cmdline}" if o.cmdline else ""
    return f"pid {o.pid} ({o.comm}{cmd})"


@check("DRV-PORT-001")
def ports_free(ctx: Context) -> Outcome:
    scan = ctx.fact(PORT_SCAN)
    if not scan.table.read:
        return skip("could not read /proc/net/tcp or /proc/net/tcp6")
    by_port = {p.port: p for p in scan.planned}
    taken = [s for s in scan.table.sockets if s.port in by_port]
    findings: list[Outcome] = []
    ev: list[Evidence] = []
    held_by_service = []
    for s in taken:
        p = by_port[s.port]
        owner = scan.owners.get(s.inode)
        line = Evidence(
            "file",
            f"/proc/net/{s.family}",
            s.line,
            {"address": s.address, "port": s.port, "inode": s.inode, "uid": s.uid},
        )
        ev.append(line)
        if owner is not None and owner.pid in scan.serving_pids:
            held_by_service.append(f"{s.port} ({p.what}) by the service itself, pid {owner.pid}")
            continue
        if owner is None and scan.serving_pids:
            findings.append(
                warn(
                    f"port {s.port} ({p.what}, from {p.origin}) is listening on {s.address} and "
                    f"its owner is unknown: {_owner_text(scan, s)}"
                )
            )
            continue
        findings.append(
            fail(
                f"port {s.port} ({p.what}, from {p.origin}) is already bound on {s.address} by "
                f"{_owner_text(scan, s)}: the service cannot listen there"
            )
        )
    hccl = [p.port for p in scan.planned if p.what.startswith("HCCL")]
    other = [f"{p.port} ({p.what})" for p in scan.planned if not p.what.startswith("HCCL")]
    wanted = ", ".join(other) or "no service port known"
    rng = f"HCCL {min(hccl)}-{max(hccl)}" if hccl else "no HCCL range"
    ev.append(
        Evidence(
            "file",
            ", ".join(f"/proc/net/{t}" for t in scan.table.read),
            f"{len(scan.table.sockets)} listening sockets; wanted: {wanted}; {rng}",
            {"planned": [p.port for p in scan.planned], "listening": len(scan.table.sockets)},
        )
    )
    note = f"; held by the service: {'; '.join(held_by_service)}" if held_by_service else ""
    out = worst(findings, f"ports free: {wanted}; {rng}{note}")
    out.evidence = ev
    return out


def _addr_ok(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip())
    except ValueError:
        return False
    return True


def _ifname_findings(var: str, spec: str, view) -> list[Outcome]:
    """`eth0`, `=eth0` (exact), `eth` (HCCL prefix), `^docker` (exclude): must exist, be up."""
    ifs = view.interfaces
    out: list[Outcome] = []
    names = [i.name for i in ifs.items]
    for item in (x.strip() for x in spec.split(",")):
        if not item or item.startswith("^"):
            continue
        exact = item.startswith("=") or var != "HCCL_SOCKET_IFNAME"
        name = item.lstrip("=")
        hits = [i for i in ifs.items if (i.name == name if exact else i.name.startswith(name))]
        if not hits:
            out.append(
                fail(
                    f"{var}={spec}: no interface {name!r} on this host "
                    f"(have {', '.join(names[:10]) or 'none'})"
                )
            )
            continue
        up = [i for i in hits if (i.state or "") in ("up", "unknown")]
        if not up:
            states = ", ".join(f"{i.name} {i.state or '?'}" for i in hits)
            out.append(fail(f"{var}={spec}: interface is not up ({states})"))
            continue
        if ifs.addresses_known and not any(i.addresses for i in up):
            out.append(fail(f"{var}={spec}: {up[0].name} holds no IP address"))
    return out


def _address_findings(var: str, value: str, view, env: dict[str, str]) -> list[Outcome]:
    if not _addr_ok(value):
        return [fail(f"{var}={value!r} is not an IP address")]
    ifs = view.interfaces
    if ifs.addresses_known:
        holders = ifs.holding(value)
        if not holders:
            return [fail(f"{var}={value} is held by no interface of this host")]
        down = [i for i in holders if (i.state or "") not in ("up", "unknown")]
        if len(down) == len(holders):
            return [fail(f"{var}={value} is on {holders[0].name}, which is {down[0].state}")]
        pinned = env.get("GLOO_SOCKET_IFNAME") if var == "VLLM_HOST_IP" else None
        if pinned and pinned.strip() and all(h.name != pinned.strip() for h in holders):
            return [
                fail(
                    f"{var}={value} is on {holders[0].name} but GLOO_SOCKET_IFNAME={pinned}: "
                    "ranks would advertise one NIC and talk on another"
                )
            ]
        return []
    if view.local_addresses and value.strip() not in view.local_addresses:
        return [fail(f"{var}={value} is not a local address ({', '.join(view.local_addresses)})")]
    if not view.local_addresses:
        return [warn(f"{var}={value}: this host's addresses could not be read")]
    return []


@check("DRV-NETIF-001")
def named_interfaces(ctx: Context) -> Outcome:
    env, origin = service_env(ctx)
    named = {k: env[k] for k in (*IFNAME_VARS, *ADDRESS_VARS) if env.get(k, "").strip()}
    if not named:
        return skip(
            f"none of {', '.join(IFNAME_VARS + ADDRESS_VARS)} is set in {origin}: "
            "the libraries pick a NIC themselves"
        )
    view = ctx.fact(NET_VIEW)
    if not view.interfaces.items:
        return skip("no network interface could be listed (/sys/class/net)")
    findings: list[Outcome] = []
    for var, value in named.items():
        if var in IFNAME_VARS:
            findings += _ifname_findings(var, value, view)
        else:
            findings += _address_findings(var, value, view, env)
    text = "\n".join(f"{k}={v}" for k, v in named.items())
    ev = [
        Evidence("config", f"environment of {origin}", text, dict(named)),
        Evidence("file", view.evidence_source, view.excerpt[:3000]),
    ]
    out = worst(findings, f"{', '.join(named)} name interfaces that exist, are up and hold them")
    out.evidence = ev
    return out


def _secs(env: dict[str, str], key: str, default: int) -> tuple[int | None, str]:
    raw = env.get(key)
    if raw is None:
        return default, f"unset (default {default} s)"
    v = raw.strip()
    return (int(v) if v.isdigit() else None), raw


@check("DRV-MNODE-001")
def multinode_timeouts(ctx: Context) -> Outcome:
    signals = multinode_signals(ctx)
    if not signals:
        return skip("no multi-node deployment seen (rank table, --nnodes, --headless, MindIE)")
    env, origin = service_env(ctx)
    ct, ct_text = _secs(env, "HCCL_CONNECT_TIMEOUT", 120)
    et, et_text = _secs(env, "HCCL_EXEC_TIMEOUT", 1836)
    want = int(ctx.policy["cluster.multinode_connect_timeout_min"])
    findings: list[Outcome] = []
    if ct is None:
        findings.append(fail(f"HCCL_CONNECT_TIMEOUT={ct_text!r} is not a whole number of seconds"))
    elif ct < want:
        findings.append(
            warn(
                f"HCCL_CONNECT_TIMEOUT {ct_text} < {want} s for a multi-node start: nodes that "
                "load weights more slowly arrive after the others gave up"
            )
        )
    if et is None:
        findings.append(fail(f"HCCL_EXEC_TIMEOUT={et_text!r} is not a whole number of seconds"))
    elif et == 0:
        findings.append(warn("HCCL_EXEC_TIMEOUT=0: a hung collective across nodes never ends"))
    elif ct is not None and et < ct:
        findings.append(
            warn(
                f"HCCL_EXEC_TIMEOUT {et} s < HCCL_CONNECT_TIMEOUT {ct} s: a collective gives up "
                "before a late node could have connected"
            )
        )
    text = f"HCCL_CONNECT_TIMEOUT={ct_text}\nHCCL_EXEC_TIMEOUT={et_text}\n" + "\n".join(signals)
    ev = [Evidence("config", f"environment of {origin}", text, {"multinode": signals})]
    out = worst(findings, f"multi-node HCCL timeouts: connect {ct} s, exec {et} s")
    out.evidence = ev
    return out


def _needed_npus(ctx: Context) -> tuple[int | None, str]:
    for cfg in _configs(ctx):
        tp = cfg.tensor_parallel_size or 1
        pp = cfg.options.get("pipeline_parallel_size") or 1
        try:
            return int(tp) * int(pp), f"{cfg.source}: tp {tp} x pp {pp}"
        except (TypeError, ValueError):
            continue
    return None, ""


@check("DRV-RAY-001")
def ray_npus(ctx: Context) -> Outcome:
    ray = ctx.fact(RAY_VIEW)
    if not ray.asked:
        return skip(ray.reason)
    res = ray.result
    ev = [res.evidence()] if res is not None else []
    if res is None or not res.ok:
        return fail(f"`ray status` failed ({res.describe() if res else 'not run'})", ev)
    if ray.npu_total is None:
        return fail("`ray status` lists no NPU resource: Ray workers cannot be placed on NPUs", ev)
    need, how = _needed_npus(ctx)
    have = ray.npu_total
    if need is not None and have < need:
        return fail(f"Ray offers {have:g} NPUs, the launch needs {need} ({how})", ev)
    return passed(f"Ray offers {have:g} NPUs ({ray.npu_used:g} in use)", ev, npu_total=have)
