"""Device access: the NPU device nodes exist and the service user may open them read-write."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import DEV_NODES, NPU_SMI
from ascend_audit.model import Evidence, Outcome, Status, fail, passed, skip, warn
from ascend_audit.registry import check

from .npu_absent import NO_NPU, no_npu_at_all

_RANK = (Status.FAIL, Status.WARN)
CONTAINER_NOTE = (
    "in a container, a /dev/davinciN is bound to the first container that opens it: another "
    "container opening it fails with `dcmi module initialize failed. ret is -8005`; give each "
    "container its own davinci devices plus davinci_manager, devmm_svm and hisi_hdc"
)


@dataclass(frozen=True)
class ServiceUser:
    """Who the service runs as, and the groups that grant it access."""

    name: str
    uid: int | None = None
    groups: frozenset[str] = frozenset()
    gids: frozenset[int] = frozenset()
    source: str = "unknown"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "uid": self.uid,
            "groups": sorted(self.groups),
            "gids": sorted(self.gids),
            "source": self.source,
        }


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


def parse_user_db(passwd: str, group: str, name: str) -> ServiceUser | None:
    """The user's uid and groups from /etc/passwd and /etc/group text; None when not listed."""
    entry = next((ln.split(":") for ln in passwd.splitlines() if ln.split(":")[0] == name), None)
    if entry is None or len(entry) < 4 or not entry[2].isdigit() or not entry[3].isdigit():
        return None
    primary = int(entry[3])
    names, gids = set(), {primary}
    for ln in group.splitlines():
        f = ln.split(":")
        if len(f) >= 4 and f[2].isdigit() and (int(f[2]) == primary or name in f[3].split(",")):
            names.add(f[0])
            gids.add(int(f[2]))
    return ServiceUser(name, int(entry[2]), frozenset(names), frozenset(gids), "/etc/passwd")


def _local_user(name: str) -> ServiceUser | None:
    try:
        import grp
        import pwd

        pw = pwd.getpwnam(name)
        gids = set(os.getgrouplist(name, pw.pw_gid))
    except (ImportError, KeyError, OSError):
        return None
    names = set()
    for gid in gids:
        try:
            names.add(grp.getgrgid(gid).gr_name)
        except KeyError:
            names.add(str(gid))
    return ServiceUser(name, pw.pw_uid, frozenset(names), frozenset(gids), "local user database")


def current_user() -> str:
    """The user this audit runs as."""
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        import getpass

        return getpass.getuser()


def resolve_user(ctx: Context) -> ServiceUser:
    """The policy's service user (default: the current user) with its groups on the node."""
    name = ctx.policy["driver.service_user"] or current_user()
    passwd, group = ctx.host.read_text("/etc/passwd"), ctx.host.read_text("/etc/group")
    if passwd.ok:
        found = parse_user_db(passwd.text or "", group.text or "", name)
        if found:
            return found
    if ctx.host.kind == "live" and ctx.host.sysroot == "/":
        found = _local_user(name)
        if found:
            return found
    return ServiceUser(name, 0 if name == "root" else None)


def in_container(ctx: Context) -> bool:
    """`/.dockerenv`, podman's marker, or PID 1's cgroup naming docker / kubepods / containerd."""
    if ctx.host.exists("/.dockerenv") or ctx.host.exists("/run/.containerenv"):
        return True
    cgroup = (ctx.host.read_text("/proc/1/cgroup").text or "").lower()
    return any(w in cgroup for w in ("docker", "kubepods", "containerd", "libpod"))


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
    user = resolve_user(ctx)
    evidence = [_dev_evidence(dev), Evidence("config", "service user", user.name, user.to_dict())]
    present = [n for n in (*dev.davinci, *dev.control) if n.exists]
    found = presence_findings(dev, chips) + access_findings(present, user)
    container = in_container(ctx)
    short = chips > len(dev.davinci_indices) > 0
    tail = f"; {CONTAINER_NOTE}" if container or short else ""
    metrics = {"davinci": len(dev.davinci_indices), "container": container}
    bad = sorted(found, key=lambda f: _RANK.index(f.status))
    if not bad:
        ok = f"{len(dev.davinci_indices)} davinci nodes and the 3 manager nodes open to {user.name}"
        return passed(ok + tail, evidence, **metrics)
    summary = "; ".join(f.summary for f in bad) + tail
    return Outcome(bad[0].status, summary, evidence, metrics)
