"""Device access: the NPU device nodes exist and the service user may open them read-write."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.container import CONTAINER
from ascend_audit.facts.driver_scan import DEV_NODES, NPU_SMI
from ascend_audit.facts.users import SERVICE_USER, ServiceUser
from ascend_audit.model import Evidence, Outcome, Status, fail, passed, skip, warn
from ascend_audit.registry import check

from .npu_absent import NO_NPU, no_npu_at_all

_RANK = (Status.FAIL, Status.WARN)
CONTAINER_NOTE = (
    "in a container, a /dev/davinciN is bound to the first container that opens it: another "
    "container opening it fails with `dcmi module initialize failed. ret is -8005`; give each "
    "container its own davinci devices plus davinci_manager, devmm_svm and hisi_hdc"
)


def _mode_bits(mode: Any) -> int | None:
    if isinstance(mode, int) and not isinstance(mode, bool):
        return mode & 0o7777
    if isinstance(mode, str) and mode.strip():
        try:
            return int(mode.strip().removeprefix("0o"), 8) & 0o7777
        except ValueError:
            return None
    return None


def can_open(
    node: Any,
    user: str,
    groups: Iterable[str] = (),
    uid: int | None = None,
    gids: Iterable[int] = (),
) -> bool | None:
    """Whether USER (in GROUPS) may open NODE read-write by owner, group and mode; None: unknown."""
    if user == "root" or uid == 0:
        return True
    bits = _mode_bits(getattr(node, "mode", None))
    if bits is None:
        return None
    owner, n_uid = getattr(node, "owner", None), getattr(node, "uid", None)
    if owner == user or (uid is not None and n_uid == uid):
        return bits & 0o600 == 0o600
    group, n_gid = getattr(node, "group", None), getattr(node, "gid", None)
    if (group and group in set(groups)) or (n_gid is not None and n_gid in set(gids)):
        return bits & 0o060 == 0o060
    return bits & 0o006 == 0o006


def access_findings(nodes: list[Any], user: ServiceUser) -> list[Outcome]:
    """Nodes the user cannot open, grouped by owner, group and mode."""
    denied: dict[str, list[str]] = {}
    unknown: list[str] = []
    for n in nodes:
        ok = can_open(n, user.name, user.groups, user.uid, user.gids)
        if ok is None:
            unknown.append(n.path)
        elif not ok:
            denied.setdefault(f"owner {n.owner}, group {n.group}, mode {n.mode}", []).append(n.path)
    groups = ", ".join(sorted(user.groups)) or "none known"
    out = [
        fail(f"user {user.name} (groups: {groups}) cannot open {', '.join(paths)} ({how})")
        for how, paths in denied.items()
    ]
    if unknown:
        out.append(warn(f"ownership of {', '.join(unknown)} unknown: access not judged"))
    return out


def presence_findings(dev: Any, chips: int) -> list[Outcome]:
    """Missing manager nodes, no davinci node at all, fewer davinci nodes than chips."""
    out: list[Outcome] = []
    if dev.missing_control:
        missing = ", ".join(dev.missing_control)
        out.append(fail(f"missing {missing}: no process can use an NPU without it"))
    count = len(dev.davinci_indices)
    if not count:
        out.append(fail("no /dev/davinciN device node: the service cannot reach any NPU"))
    elif chips > count:
        out.append(fail(f"only {count} /dev/davinci nodes for the {chips} chips npu-smi lists"))
    return out


def _dev_evidence(dev: Any) -> Evidence:
    lines = [
        f"{n.path} {'present' if n.exists else 'MISSING'} {n.owner}:{n.group} {n.mode}"
        for n in (*dev.davinci, *dev.control)
    ]
    return Evidence("file", "/dev", "\n".join(lines), dev.to_dict())


@check("DRV-DEV-001")
def device_access(ctx: Context) -> Outcome:
    if no_npu_at_all(ctx):
        return skip(f"{NO_NPU} (DRV-NPU-001): no device node to open")
    dev = ctx.fact(DEV_NODES)
    info = ctx.fact(NPU_SMI).info
    chips = info.chip_count if info is not None else 0
    user = ctx.fact(SERVICE_USER)
    evidence = [_dev_evidence(dev), Evidence("config", "service user", user.name, user.to_dict())]
    present = [n for n in (*dev.davinci, *dev.control) if n.exists]
    found = presence_findings(dev, chips) + access_findings(present, user)
    container = bool(ctx.fact(CONTAINER).in_container)
    short = chips > len(dev.davinci_indices) > 0
    tail = f"; {CONTAINER_NOTE}" if container or short else ""
    metrics = {"davinci": len(dev.davinci_indices), "container": container}
    bad = sorted(found, key=lambda f: _RANK.index(f.status))
    if not bad:
        ok = f"{len(dev.davinci_indices)} davinci nodes and the 3 manager nodes open to {user.name}"
        return passed(ok + tail, evidence, **metrics)
    summary = "; ".join(f.summary for f in bad) + tail
    return Outcome(bad[0].status, summary, evidence, metrics)
