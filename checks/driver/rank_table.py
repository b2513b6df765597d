"""Rank table: well formed, completed, and its entries for this node match the devices' RoCE IPs."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.network import LOCAL_ADDRESSES, NETWORK, RANK_TABLE, SERVING_ENV
from ascend_audit.model import Evidence, Outcome, error, fail, skip, warn, worst
from ascend_audit.registry import check


def find_local_server(ctx: Context, table: Any, live_ips: dict[int, str]) -> tuple[Any, str]:
    """This node's server entry and how it was recognised (None, reason when not found).

    Host-agnostic (works on a --sysroot tree and on a snapshot): first the server whose device
    IPs hccn_tool reports on this node; then a server whose server_id / host_ip / container_ip
    is a local address (/proc/net/fib_trie, HCCL_IF_IP); then server_id equal to /etc/hostname;
    finally a table with a single server.
    """
    mine = set(live_ips.values())
    scored = [(sum(1 for d in s.devices if d.device_ip in mine), s) for s in table.servers]
    best = max(scored, key=lambda x: x[0], default=(0, None))
    if best[0]:
        return best[1], f"its device IPs match hccn_tool -ip on {best[0]} device(s)"
    local = ctx.fact(LOCAL_ADDRESSES)
    addrs = set(local.addresses)
    if_ip = ctx.fact(SERVING_ENV).env.get("HCCL_IF_IP")
    if if_ip:
        addrs.add(if_ip)
    for s in table.servers:
        hit = {s.server_id, s.host_ip, s.container_ip} & addrs
        if hit:
            return s, f"server {s.server_id} names local address {sorted(hit)[0]}"
    if local.hostname:
        for s in table.servers:
            if s.server_id == local.hostname:
                return s, f"server_id equals the hostname {local.hostname}"
    if len(table.servers) == 1:
        return table.servers[0], "the table lists a single server"
    return None, "no server matched by device IPs, local addresses or hostname"


@check("DRV-RANK-001")
def rank_table(ctx: Context) -> Outcome:
    from ascend_audit.facts.rank_table import problems_of

    rt = ctx.fact(RANK_TABLE)
    if not rt.path:
        return skip("no rank table: pass --rank-table FILE or set RANK_TABLE_FILE for the service")
    src = f"{rt.path} ({rt.origin})"
    if rt.text is None:
        return error(f"rank table {src} unreadable: {rt.error}", [Evidence("file", rt.path)])
    t = rt.table
    if t is None:  # the gatherer parses whatever text it read; no table means no text
        return error(f"rank table {src} gave no table", [Evidence("file", rt.path)])
    ev = [
        Evidence(
            "file",
            rt.path,
            rt.text[:3000],
            {
                "origin": rt.origin,
                "layout": t.layout,
                "version": t.version,
                "servers": len(t.servers),
            },
        )
    ]
    if t.layout in ("invalid", "unknown"):
        return fail(f"rank table {src} is not a rank table: {'; '.join(t.problems[:2])}", ev)
    findings = [fail(p) for p in problems_of(t)[:12]]
    net = ctx.fact(NETWORK)
    live = {d: ip.ipaddr for d in net.devices if (ip := net.get("ip", d)) and ip.ipaddr}
    server, how = find_local_server(ctx, t, live)
    ev.append(Evidence("config", "this node in the rank table", how, {"live_ips": live}))
    if server is None:
        findings.append(warn(f"this node is not in the table ({how})"))
    else:
        findings += _local_devices(net, server, live)
        if len(net.devices) == 16 and t.layout == "server_list" and t.version != "1.2":
            findings.append(warn(f'16-die A3 node but table version {t.version!r}, not "1.2"'))
    summary = f"rank table {t.layout} v{t.version}: {len(t.servers)} server(s), {t.size} ranks"
    out = worst(findings, summary + (f"; this node's device IPs agree ({how})" if server else ""))
    out.evidence = ev
    out.metrics = {"ranks": t.size, "servers": len(t.servers)}
    return out


def _local_devices(net: Any, server: Any, live: dict[int, str]) -> list[Outcome]:
    """This node's entries against hccn_tool -ip and /etc/hccn.conf."""
    out: list[Outcome] = []
    conf = net.conf.addresses() if net.conf else {}
    for d in server.devices:
        try:
            dev = int(str(d.device_id))
        except ValueError:
            continue
        if net.devices and dev not in net.devices:
            out.append(fail(f"device_id {dev} of server {server.server_id} is not on this node"))
            continue
        if dev in live and d.device_ip and live[dev] != d.device_ip:
            out.append(
                fail(
                    f"device {dev}: rank table device_ip {d.device_ip} but hccn_tool -ip "
                    f"reports {live[dev]} (HCCP rejects this: EI0014)"
                )
            )
        if dev in conf and d.device_ip and conf[dev] != d.device_ip:
            out.append(
                warn(
                    f"device {dev}: rank table device_ip {d.device_ip} but /etc/hccn.conf "
                    f"address_{dev}={conf[dev]}"
                )
            )
    return out
