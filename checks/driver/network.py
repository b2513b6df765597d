"""RoCE network between nodes (hccn_tool): links and probe health, addressing, optics, TLS."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.network import NETWORK, NetworkScan
from ascend_audit.model import Outcome, fail, passed, skip, warn, worst
from ascend_audit.registry import check

from .npu_absent import REFUSED_REMEDIATION

HEALTH_MEANING = {
    1: "failed to create the probe socket",
    2: "no reply to probe packets",
    3: "the detect IP is unreachable",
    4: "timeout sending probe packets",
    5: "failed to send probe packets",
    6: "the detection task is still initialising",
    7: "failed to create the detection task",
    8: "the detect IP is being set",
    9: "unknown state",
}


def _scan_or_skip(ctx: Context) -> tuple[NetworkScan, Outcome | None]:
    """The network scan, or the SKIP that says why nothing could be asked."""
    net = ctx.fact(NETWORK)
    if net.tool is None:
        return net, skip(
            "hccn_tool not found (not on PATH, not at /usr/local/Ascend/driver/tools/hccn_tool): "
            "RoCE links cannot be checked here; run on the host or mount hccn_tool into the "
            "container — this is not a pass"
        )
    if not net.devices:
        return net, skip("no NPU device ids known (npu-smi and /dev/davinci* gave none)")
    refused = next((r for r in net.results.values() if r.status == "refused"), None)
    if refused is not None:  # another user could replace it: root does not run it
        out = _bad(
            ctx,
            f"hccn_tool was not run: {refused.error}; RoCE links cannot be checked",
            REFUSED_REMEDIATION.format(tool="hccn_tool"),
        )
        out.evidence = [refused.evidence()]
        return net, out
    return net, None


def _bad(ctx: Context, summary: str, remediation: str | None = None) -> Outcome:
    """FAIL when RoCE is required by the policy, else WARN."""
    if ctx.policy["cluster.roce_required"]:
        return fail(summary, remediation=remediation)
    return warn(summary + " (cluster.roce_required = false)", remediation=remediation)


def _no_answer(net: NetworkScan, sub: str, d: int) -> str | None:
    res = net.result(sub, d)
    if res is None or res.status in ("ok", "nonzero"):
        return None
    return res.describe()


@check("DRV-NET-001")
def links_and_health(ctx: Context) -> Outcome:
    net, skipped = _scan_or_skip(ctx)
    if skipped:
        return skipped
    findings: list[Outcome] = []
    for d in net.devices:
        hung = _no_answer(net, "link", d)
        link = net.get("link", d)
        if hung:
            findings.append(fail(f"device {d}: {hung}"))
        elif link is None or link.status is None:
            findings.append(warn(f"device {d}: hccn_tool gave no link status"))
        elif not link.up:
            findings.append(_bad(ctx, f"device {d}: RoCE link {link.status}"))
        h = net.get("net_health", d)
        if h is None or h.level == "unknown":
            findings.append(warn(f"device {d}: no net health answer"))
        elif h.level == "warn":
            findings.append(warn(f"device {d}: net health Init (probe has not completed)"))
        elif h.level == "fail":
            what = HEALTH_MEANING.get(h.code, "not a known state")
            code = f"code {h.code}" if h.code is not None else "unknown code"
            findings.append(_bad(ctx, f"device {d}: net health {h.raw!r} ({code}: {what})"))
    evidence = [net.evidence("link"), net.evidence("net_health"), net.evidence("lldp")]
    up = sum(1 for d in net.devices if (x := net.get("link", d)) and x.up)
    out = worst(findings, f"{len(net.devices)} RoCE ports UP, net health Success on every device")
    out.evidence = evidence
    out.metrics = {"devices": len(net.devices), "links_up": up}
    return out


@check("DRV-NET-002")
def addressing(ctx: Context) -> Outcome:
    net, skipped = _scan_or_skip(ctx)
    if skipped:
        return skipped
    findings: list[Outcome] = []
    families: set[str] = set()
    seen: dict[str, list[int]] = {}
    for d in net.devices:
        ip = net.get("ip", d)
        if ip is None or not ip.addresses:
            why = (ip.error if ip else None) or _no_answer(net, "ip", d) or "no address"
            findings.append(_bad(ctx, f"device {d}: no RoCE IP ({why})"))
            continue
        a = ip.addresses[0]
        families.add(a.family)
        seen.setdefault(a.address, []).append(d)
        if a.family == "ipv4" and not a.netmask:
            findings.append(_bad(ctx, f"device {d}: IP {a.address} has no netmask"))
        nd, gw = net.get("netdetect", d), net.get("gateway", d)
        if nd is None or not nd.address:
            findings.append(warn(f"device {d}: no detect IP (net health has nothing to probe)"))
        if gw is None or not gw.gateway:
            findings.append(warn(f"device {d}: no gateway (needed when device subnets differ)"))
        conf = net.conf.device(d) if net.conf else None
        if conf and conf.address and conf.address != a.address:
            findings.append(
                warn(
                    f"device {d}: /etc/hccn.conf address_{d}={conf.address} but device has "
                    f"{a.address} (stale file; the device value is what HCCL uses)"
                )
            )
    for addr, devs in seen.items():
        if len(devs) > 1:
            findings.append(fail(f"IP {addr} set on devices {devs}"))
    if len(families) > 1:
        findings.append(fail("devices mix IPv4 and IPv6; HCCL needs one family for all ranks"))
    evidence = [net.evidence(s) for s in ("ip", "netdetect", "gateway")]
    if net.conf_read is not None:
        evidence.append(net.conf_read.evidence())
    out = worst(findings, f"{len(net.devices)} devices: IP, netmask, detect IP and gateway set")
    out.evidence = evidence
    return out


@check("DRV-NET-003")
def optics_and_flaps(ctx: Context) -> Outcome:
    net, skipped = _scan_or_skip(ctx)
    if skipped:
        return skipped
    findings: list[Outcome] = []
    hours = float(ctx.policy["cluster.flap_window_hours"])
    unread = 0
    flaps: dict[int, list[str]] = {}
    for d in net.devices:
        mod = net.get("optical", d)
        alarms = [a for a in (mod.alarms if mod else ()) if not a.startswith("no optical data")]
        if mod is None or len(alarms) < len(mod.alarms):
            unread += 1
        for a in alarms:
            hard = "not present" in a or "loss of" in a
            findings.append((fail if hard else warn)(f"device {d}: {a}"))
        st = net.get("link_stat", d)
        if st is not None and st.downs_within(hours * 3600):
            recs = [f"{r.time} LINK {r.state}" for r in st.records[:6]]
            flaps[d] = recs
            findings.append(
                warn(
                    f"device {d}: {st.downs_within(hours * 3600)} LINK DOWN in the last "
                    f"{hours:g} h ({'; '.join(recs[:3])})"
                )
            )
    if unread == len(net.devices):
        findings.append(warn("no device returned optical module data"))
    out = worst(findings, "optical modules present, lane power within thresholds, no recent flaps")
    out.evidence = [net.evidence("optical"), net.evidence("link_stat")]
    out.metrics = {"flapping_devices": sorted(flaps)}
    return out


@check("DRV-NET-004")
def tls_consistency(ctx: Context) -> Outcome:
    net, skipped = _scan_or_skip(ctx)
    if skipped:
        return skipped
    values = {d: t.switch for d in net.devices if (t := net.get("tls", d)) and t.switch is not None}
    ev = [net.evidence("tls", values={str(k): v for k, v in values.items()})]
    if not values:
        return warn("no device reported its TLS switch", ev)
    distinct = sorted(set(values.values()))
    if len(distinct) > 1:
        on = [d for d, v in values.items() if v == 1]
        return fail(f"TLS switch differs between devices: enabled on {on}, disabled elsewhere", ev)
    wanted = ctx.policy["cluster.expected_tls"]
    state = "enabled" if distinct[0] == 1 else "disabled"
    missing = [d for d in net.devices if d not in values]
    if wanted != "any" and state != wanted:
        return warn(f"TLS {state} on every device; policy cluster.expected_tls = {wanted}", ev)
    if missing:
        return warn(f"TLS {state} where known; devices {missing} did not answer", ev)
    return passed(f"TLS {state} on all {len(values)} devices", ev)
