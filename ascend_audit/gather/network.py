"""RoCE network gatherers: hccn_tool per device (one concurrent batch), /etc/hccn.conf, local IPs.

hccn_tool takes the device's physical index (`/dev/davinciN`, `address_N`, a rank table's
`device_id`); the indices come from npu-smi (phy ids on A3, NPU ids on A2), else /dev/davinci*.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.driver_scan import DEV_NODES, NPU_SMI
from ascend_audit.facts.network import (
    LOCAL_ADDRESSES,
    NETWORK,
    RANK_TABLE,
    SERVING_ENV,
    LocalAddresses,
    NetworkScan,
    RankTableInput,
    ServingEnv,
)
from ascend_audit.host.base import CommandResult
from ascend_audit.safe_io import open_regular

HCCN_TOOL = "hccn_tool"
HCCN_TOOL_PATH = "/usr/local/Ascend/driver/tools/hccn_tool"
HCCN_CONF = "/etc/hccn.conf"
SUBS = ("link", "net_health", "ip", "gateway", "netdetect", "optical", "link_stat", "lldp", "tls")
_FIB_LOCAL_RE = re.compile(r"^\s*/32 host LOCAL\s*$")
_FIB_ADDR_RE = re.compile(r"^\s*\|--\s+(\d{1,3}(?:\.\d{1,3}){3})\s*$")


def _parser(sub: str) -> Any:
    from ascend_audit.facts import hccn

    return {
        "link": hccn.parse_link,
        "net_health": hccn.parse_net_health,
        "ip": hccn.parse_ip,
        "gateway": hccn.parse_gateway,
        "netdetect": hccn.parse_netdetect,
        "optical": hccn.parse_optical,
        "link_stat": hccn.parse_link_stat,
        "lldp": hccn.parse_lldp,
        "tls": hccn.parse_tls,
    }[sub]


def hccn_tool_argv0(ctx: Context) -> str | None:
    """`hccn_tool` when on PATH; the driver's fixed path on a live root filesystem; else None."""
    if ctx.host.which(HCCN_TOOL):
        return HCCN_TOOL
    if ctx.host.sysroot in ("", "/") and ctx.host.exists(HCCN_TOOL_PATH):
        return HCCN_TOOL_PATH
    return None


def device_ids(ctx: Context) -> tuple[tuple[int, ...], str]:
    """Physical device indices hccn_tool takes, and where they came from."""
    try:
        run = ctx.fact(NPU_SMI)
        chips = run.info.chips if run.info is not None else ()
    except Exception:
        chips = ()
    if chips:
        phys = {c.phy_id for c in chips if c.phy_id is not None}
        if len(phys) == len(chips):
            return tuple(sorted(phys)), "npu-smi"
        per_npu: dict[int, int] = {}
        for c in chips:
            per_npu[c.npu_id] = per_npu.get(c.npu_id, 0) + 1
        if all(n == 1 for n in per_npu.values()):
            return tuple(sorted(per_npu)), "npu-smi"
        return tuple(range(len(chips))), "npu-smi"
    try:
        davinci = tuple(ctx.fact(DEV_NODES).davinci_indices)
    except Exception:
        davinci = ()
    return (tuple(sorted(davinci)), "/dev/davinci*") if davinci else ((), "")


def _one(sub: str, res: CommandResult, device: int) -> Any:
    """Parse one device's answer; the device number is ours, not the output's."""
    text = res.stdout if res.stdout.strip() else res.stderr
    facts = _parser(sub)(text)
    items = getattr(facts, "devices", ())
    if not items:
        return None
    return dataclasses.replace(items[0], device=device)


@gatherer(NETWORK, "driver")
def network(ctx: Context) -> NetworkScan:
    """Every device x subcommand in one concurrent batch, each call with its own timeout."""
    from ascend_audit.facts.hccn import parse_hccn_conf

    conf_read = ctx.host.read_text(HCCN_CONF)
    conf = parse_hccn_conf(conf_read.text) if conf_read.ok else None
    tool = hccn_tool_argv0(ctx)
    devices, source = device_ids(ctx)
    if tool is None or not devices:
        return NetworkScan(tool, devices, source, conf=conf, conf_read=conf_read)
    keys = [(d, s) for d in devices for s in SUBS]
    argvs = [[tool, "-i", str(d), f"-{s}", "-g"] for d, s in keys]
    results = dict(zip(keys, ctx.host.run_many(argvs, ctx.timeout)))
    parsed: dict[str, dict[int, Any]] = {s: {} for s in SUBS}
    for (d, s), res in results.items():
        if res.status in ("ok", "nonzero"):
            item = _one(s, res, d)
            if item is not None:
                parsed[s][d] = item
    return NetworkScan(tool, devices, source, results, parsed, conf, conf_read)


@gatherer(LOCAL_ADDRESSES, "driver")
def local_addresses(ctx: Context) -> LocalAddresses:
    """Local IPv4 addresses: `/32 host LOCAL` entries of /proc/net/fib_trie; /etc/hostname."""
    fib = ctx.host.read_text("/proc/net/fib_trie")
    found: list[str] = []
    last: str | None = None
    for line in (fib.text or "").splitlines():
        m = _FIB_ADDR_RE.match(line)
        if m:
            last = m.group(1)
        elif last and _FIB_LOCAL_RE.match(line):
            if last not in found and not last.startswith("127."):
                found.append(last)
            last = None
    host = ctx.host.read_text("/etc/hostname")
    name = (host.text or "").strip() or None
    return LocalAddresses(tuple(found), name, fib.ok)


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """Device RoCE addresses and link states, when hccn_tool answered."""
    scan: NetworkScan | None = facts.get("network")
    if scan is None or scan.tool is None:
        return {}
    roce = []
    for d in scan.devices:
        ip, link = scan.get("ip", d), scan.get("link", d)
        roce.append(
            {
                "device": d,
                "ip": ip.ipaddr if ip else None,
                "netmask": ip.netmask if ip else None,
                "link": link.status if link else None,
            }
        )
    return {"roce": roce}


# ---------------------------------------------------------------------------------------------
# the serving environment (HCCL_*, RANK_TABLE_FILE) and the rank table

RANK_TABLE_VARS = ("RANK_TABLE_FILE", "RANKTABLEFILE", "DISAGGREGATED_PREFILL_RANK_TABLE_PATH")


@gatherer(SERVING_ENV, "driver")
def serving_env(ctx: Context) -> ServingEnv:
    """The first serving process's environment (its serving-relevant keys); else host.env()."""
    from ascend_audit.gather.framework import serving_processes

    procs = serving_processes(ctx)
    try:
        gaps = tuple(g.describe() for g in ctx.host.process_gaps())
    except Exception:
        gaps = ()
    proc = next((p for p in procs if p.environ), procs[0] if procs else None)
    if proc is not None:
        head = " ".join(proc.cmdline)[:80]
        return ServingEnv(dict(proc.environ), f"process {proc.pid} ({head})", proc.pid, gaps)
    return ServingEnv(ctx.host.env(), "the audit's environment", None, gaps)


@gatherer(RANK_TABLE, "driver")
def rank_table(ctx: Context) -> RankTableInput:
    """--rank-table (a user input), else RANK_TABLE_FILE & co. of the service (a node path)."""
    from ascend_audit.facts.rank_table import parse_rank_table

    path, origin, text, error = ctx.inputs.rank_table, "--rank-table", None, None
    if path:
        local = ctx.host.input_path(path)
        if local is None:
            error = "no such file"
        else:
            try:
                with open_regular(local) as fh:
                    text = fh.read(64 * 1024 * 1024).decode("utf-8", errors="replace")
            except OSError as exc:
                error = exc.strerror or type(exc).__name__
    else:
        senv = ctx.fact(SERVING_ENV)
        var = next((v for v in RANK_TABLE_VARS if senv.env.get(v)), None)
        if var is None:
            return RankTableInput(None, "")
        path, origin = senv.env[var], f"{var} in {senv.origin}"
        read = ctx.host.read_text(path)
        text, error = read.text, read.error
    table = parse_rank_table(text) if text is not None else None
    return RankTableInput(path, origin, text, error, table)
