"""Where the model weights live: local NVMe, live and optimized NVMe-oF, NFS, or other."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.facts.storage import WEIGHTS_STORAGE, WeightsStorage
from ascend_audit.model import Evidence, Outcome, error, fail, skip, warn, worst
from ascend_audit.registry import check

NFS_NUMBERS = (
    "loading took 691 s → 112 s (32B model) and 1399 s → 150 s (70B model) after moving from NFS "
    "to NVMe-oF together with driver and framework adaptation"
)


def _nvmeof(ws: WeightsStorage) -> list[Outcome]:
    """Every controller `live`, every multipath path `optimized`."""
    loc = ws.location
    assert loc is not None
    out: list[Outcome] = []
    down = [f"{c} is {s or 'unknown'}" for c, s in loc.controller_states if s != "live"]
    if down:
        out.append(fail(f"NVMe-oF controller not live: {', '.join(down)}"))
    slow = [f"{p} is {s or 'unknown'}" for p, s in loc.ana_states if s != "optimized"]
    if slow:
        out.append(fail(f"NVMe-oF path not optimized: {', '.join(slow)}"))
    return out


def _kind(ctx: Context, ws: WeightsStorage) -> list[Outcome]:
    """Network filesystems warn; with require_nvmeof anything but NVMe-oF fails."""
    loc = ws.location
    assert loc is not None
    where = f"{ws.weights.path} is on {loc.fstype} {loc.source}"
    if ctx.policy["driver.require_nvmeof"] and loc.kind != "nvme-of":
        return [fail(f"{where} ({loc.kind}); policy driver.require_nvmeof wants live NVMe-oF")]
    if loc.kind == "nfs":
        return [warn(f"{where} (NFS, server {loc.nfs_server}): slow weight loading; {NFS_NUMBERS}")]
    if loc.is_network and loc.kind != "nvme-of":
        return [warn(f"{where} (network filesystem {loc.kind}): weight loading depends on it")]
    return []


@check("DRV-STOR-001")
def weights_storage(ctx: Context) -> Outcome:
    ws: WeightsStorage = ctx.fact(WEIGHTS_STORAGE)
    if ws.weights.path is None:
        why = f" ({ws.weights.note})" if ws.weights.note else ""
        return skip(f"no weights path: set driver.weights_path{why}")
    loc = ws.location
    evidence = [Evidence("config", ws.weights.origin, ws.weights.path, {"exists": ws.exists})]
    if ws.mounts is not None:
        evidence.append(ws.mounts.read.evidence(excerpt=_mount_line(ws)))
    if loc is not None:
        evidence.append(
            Evidence("file", "/sys/class/nvme", "", loc.to_dict() | {"via": ws.nvme_via})
        )
    if loc is None or loc.kind == "unknown":
        why = "; ".join(loc.problems) if loc else "no mount table"
        return error(f"cannot tell where {ws.weights.path} lives: {why}", evidence)
    findings = _kind(ctx, ws)
    if loc.kind == "nvme-of":
        findings += _nvmeof(ws)
    if ws.exists is False:
        findings.append(fail(f"{ws.weights.path} does not exist on this node"))
    ok = f"{ws.weights.path} is on {loc.kind} ({loc.fstype} {loc.source}"
    if loc.kind == "nvme-of":
        ok += f", {loc.transport}, {len(loc.controller_states)} live controller(s), "
        ok += f"{len(loc.ana_states)} optimized path(s)"
    outcome = worst(findings, ok + ")")
    outcome.evidence = evidence
    outcome.metrics = {"kind": loc.kind}
    return outcome


def _mount_line(ws: WeightsStorage) -> str:
    """The mount table line of the weights' mount point."""
    loc = ws.location
    text = ws.mounts.read.text if ws.mounts else None
    if not loc or not loc.mount_point or not text:
        return ""
    needle = f" {loc.mount_point} "
    return next((line for line in text.splitlines() if needle in line), "")
