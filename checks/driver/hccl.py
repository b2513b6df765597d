"""HCCL settings of the service: timeouts, the host NIC it binds, the communication buffer."""

from __future__ import annotations

import ipaddress

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import HOST_NICS
from ascend_audit.facts.network import LOCAL_ADDRESSES, SERVING_ENV
from ascend_audit.model import Evidence, Outcome, fail, warn, worst
from ascend_audit.policy import Policy
from ascend_audit.registry import check

DEFAULTS = {  # documented defaults (hicann/hccl user guide, hccl_env)
    "HCCL_CONNECT_TIMEOUT": "120 s (range 120-7200)",
    "HCCL_EXEC_TIMEOUT": "1836 s (A2 host modes / A3 AI_CPU; 1091 s in AIV mode)",
    "HCCL_IF_IP": "unset: HCCL picks the first non-docker, non-lo NIC by name",
    "HCCL_SOCKET_IFNAME": "unset",
    "HCCL_BUFFSIZE": "200 MB",
}


def _int(value: str | None) -> int | None:
    v = (value or "").strip()
    return int(v) if v.isdigit() else None


def _timeouts(env: dict[str, str], policy: Policy) -> list[Outcome]:
    out: list[Outcome] = []
    raw = env.get("HCCL_CONNECT_TIMEOUT")
    ct = _int(raw) if raw is not None else 120
    if ct is None or not 120 <= ct <= 7200:
        out.append(fail(f"HCCL_CONNECT_TIMEOUT={raw!r} outside 120-7200 s (EI0001 at init)"))
    elif ct < policy["cluster.hccl_connect_timeout_min"]:
        want = policy["cluster.hccl_connect_timeout_min"]
        out.append(warn(f"HCCL_CONNECT_TIMEOUT {ct} s < {want} s wanted by the policy"))
    raw = env.get("HCCL_EXEC_TIMEOUT")
    et = _int(raw) if raw is not None else 1836
    want = policy["cluster.hccl_exec_timeout_min"]
    if et is None:
        out.append(fail(f"HCCL_EXEC_TIMEOUT={raw!r} is not a whole number of seconds"))
    elif want and et != 0 and et < want:
        out.append(warn(f"HCCL_EXEC_TIMEOUT {et} s < {want} s wanted by the policy"))
    return out


def _nic(ctx: Context, env: dict[str, str]) -> list[Outcome]:
    out: list[Outcome] = []
    if_ip, ifname = env.get("HCCL_IF_IP"), env.get("HCCL_SOCKET_IFNAME")
    if if_ip:
        try:
            ipaddress.ip_address(if_ip.strip())
        except ValueError:
            out.append(fail(f"HCCL_IF_IP={if_ip!r} is not an IP address"))
        else:
            local = ctx.fact(LOCAL_ADDRESSES)
            if local.addresses and if_ip.strip() not in local.addresses:
                out.append(
                    fail(
                        f"HCCL_IF_IP={if_ip} is not an address of this host "
                        f"(local: {', '.join(local.addresses[:6])})"
                    )
                )
    if ifname:
        out += _ifnames(ctx, ifname)
    if not (if_ip or ifname) and ctx.policy["cluster.require_hccl_if"]:
        out.append(
            warn(
                "neither HCCL_IF_IP nor HCCL_SOCKET_IFNAME is set "
                "(policy cluster.require_hccl_if): HCCL guesses the host NIC"
            )
        )
    return out


def _ifnames(ctx: Context, spec: str) -> list[Outcome]:
    """HCCL_SOCKET_IFNAME: `eth` prefix, `=eth0` exact, `^` excludes; names must exist and be up."""
    nics = ctx.fact(HOST_NICS)
    out: list[Outcome] = []
    for item in (x.strip() for x in spec.split(",")):
        if not item or item.startswith("^"):
            continue
        exact = item.startswith("=")
        name = item.lstrip("=")
        hits = [n for n in nics if (n == name if exact else n.startswith(name))]
        if not hits:
            out.append(
                fail(
                    f"HCCL_SOCKET_IFNAME {item!r} matches no interface on this host "
                    f"({', '.join(sorted(nics)[:8]) or 'none visible'})"
                )
            )
        elif not any((nics[h] or "").lower() in ("up", "unknown") for h in hits):
            states = ", ".join(f"{h} {nics[h] or '?'}" for h in hits)
            out.append(fail(f"HCCL_SOCKET_IFNAME {item!r}: no matching interface is up ({states})"))
    return out


@check("DRV-HCCL-001")
def hccl_settings(ctx: Context) -> Outcome:
    senv = ctx.fact(SERVING_ENV)
    env = senv.env
    findings = _timeouts(env, ctx.policy) + _nic(ctx, env)
    raw = env.get("HCCL_BUFFSIZE")
    size = _int(raw) if raw is not None else 200
    want = ctx.policy["cluster.hccl_buffsize_mb"]
    if size is None or size < 1:
        findings.append(fail(f"HCCL_BUFFSIZE={raw!r} is not a whole number of MB >= 1"))
    elif want and size != want:
        findings.append(warn(f"HCCL_BUFFSIZE {size} MB, policy wants {want} MB"))
    shown = {k: env.get(k, f"unset (default {d})") for k, d in DEFAULTS.items()}
    text = "\n".join(f"{k}={v}" for k, v in shown.items())
    ev = [Evidence("config", f"environment of {senv.origin}", text, {"defaults": DEFAULTS})]
    out = worst(findings, f"HCCL settings of {senv.origin} are valid (defaults where unset)")
    out.evidence = ev
    return out
