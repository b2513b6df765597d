"""Mount tables and where a path's bytes really live: local NVMe, NVMe-oF, NFS, other."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import to_jsonable
from ascend_audit.facts.sysfs import (
    CLASS_BLOCK,
    NvmeInventory,
    SysfsReader,
    collect_nvme,
)
from ascend_audit.facts.sysfs.base import SafeReader

_ESCAPE_RE = re.compile(r"\\([0-7]{3})")
_DEVNUM_RE = re.compile(r"^(\d{1,10}):(\d{1,10})$")
_SUBSYS_NS_RE = re.compile(r"/(nvme-subsys\d+)/(nvme\d+n\d+)(?:/|$)")
_CTRL_NS_RE = re.compile(r"/(nvme\d+)/(nvme\d+(?:c\d+)?n\d+)(?:/|$)")
_MAX_SLAVE_DEPTH = 8

NETWORK_KINDS = frozenset({"nfs", "cifs", "lustre", "gpfs", "ceph", "fuse", "nvme-of"})
_FSTYPE_KINDS = {
    "nfs": "nfs",
    "nfs4": "nfs",
    "cifs": "cifs",
    "smb3": "cifs",
    "smbfs": "cifs",
    "lustre": "lustre",
    "gpfs": "gpfs",
    "ceph": "ceph",
    "fuse.ceph-fuse": "ceph",
    "fuse.ceph": "ceph",
}


def unescape_mount_field(text: str) -> str:
    """Undo the kernel's octal escapes in mount fields (`\\040` space, `\\011` tab, …)."""
    if "\\" not in text:
        return text
    return _ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 8)), text)


@dataclass(frozen=True)
class Mount:
    """One mount from /proc/self/mountinfo (or /proc/mounts, without ids and major:minor)."""

    mount_point: str
    fstype: str
    source: str
    options: tuple[str, ...]
    super_options: tuple[str, ...] = ()
    root: str = "/"
    major: int | None = None
    minor: int | None = None
    mount_id: int | None = None
    parent_id: int | None = None
    optional: tuple[str, ...] = ()

    @property
    def devnum(self) -> str | None:
        if self.major is None or self.minor is None:
            return None
        return f"{self.major}:{self.minor}"

    def option(self, key: str) -> str | None:
        """Value of `key=value` in the mount or superblock options (superblock wins)."""
        found = None
        for opt in (*self.options, *self.super_options):
            k, sep, v = opt.partition("=")
            if k == key:
                found = v if sep else ""
        return found

    def has_flag(self, flag: str) -> bool:
        return flag in self.options or flag in self.super_options


@dataclass(frozen=True)
class MountTable:
    """Parsed mounts in kernel order (later mounts cover earlier ones), with parse problems."""

    mounts: tuple[Mount, ...]
    source: str  # mountinfo | mounts
    problems: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Mount]:
        return iter(self.mounts)

    def __len__(self) -> int:
        return len(self.mounts)

    def __getitem__(self, index: int) -> Mount:
        return self.mounts[index]

    def at(self, mount_point: str) -> Mount | None:
        """The topmost mount exactly at mount_point."""
        for m in reversed(self.mounts):
            if m.mount_point == mount_point:
                return m
        return None

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


def _split_opts(text: str) -> tuple[str, ...]:
    return tuple(o for o in text.split(",") if o) if text else ()


def parse_mountinfo(text: str | None) -> MountTable:
    """Parse /proc/self/mountinfo; bad lines become problems (iterable like a tuple of Mount)."""
    if not isinstance(text, str):
        return MountTable((), "mountinfo", ("mountinfo: no text",))
    mounts: list[Mount] = []
    problems: list[str] = []
    bad = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split(" ")
        try:
            sep = fields.index("-", 6)
        except ValueError:
            sep = -1
        if sep < 0 or len(fields) < sep + 3:
            bad += 1
            if bad <= 5:
                problems.append(f"mountinfo line {lineno}: malformed: {line[:120]!r}")
            continue
        m = _DEVNUM_RE.match(fields[2])
        mount_id = fields[0] if fields[0].isdecimal() else None
        parent = fields[1] if fields[1].isdecimal() else None
        mounts.append(
            Mount(
                mount_point=unescape_mount_field(fields[4]),
                fstype=unescape_mount_field(fields[sep + 1]),
                source=unescape_mount_field(fields[sep + 2]),
                options=_split_opts(fields[5]),
                super_options=_split_opts(fields[sep + 3]) if len(fields) > sep + 3 else (),
                root=unescape_mount_field(fields[3]),
                major=int(m.group(1)) if m else None,
                minor=int(m.group(2)) if m else None,
                mount_id=int(mount_id) if mount_id else None,
                parent_id=int(parent) if parent else None,
                optional=tuple(f for f in fields[6:sep] if f),
            )
        )
    if bad > 5:
        problems.append(f"mountinfo: {bad} malformed lines in all")
    if not mounts:
        problems.append("mountinfo: no mounts parsed")
    return MountTable(tuple(mounts), "mountinfo", tuple(problems))


def parse_proc_mounts(text: str | None) -> MountTable:
    """Parse /proc/mounts (`source mountpoint fstype options 0 0`); no major:minor there."""
    if not isinstance(text, str):
        return MountTable((), "mounts", ("mounts: no text",))
    mounts: list[Mount] = []
    problems: list[str] = []
    bad = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split()
        if len(fields) < 4:
            bad += 1
            if bad <= 5:
                problems.append(f"mounts line {lineno}: malformed: {line[:120]!r}")
            continue
        mounts.append(
            Mount(
                mount_point=unescape_mount_field(fields[1]),
                fstype=unescape_mount_field(fields[2]),
                source=unescape_mount_field(fields[0]),
                options=_split_opts(fields[3]),
            )
        )
    if bad > 5:
        problems.append(f"mounts: {bad} malformed lines in all")
    if not mounts:
        problems.append("mounts: no mounts parsed")
    return MountTable(tuple(mounts), "mounts", tuple(problems))


# ---------------------------------------------------------------------------------------------
# classification


@dataclass(frozen=True)
class StorageLocation:
    """Where a path lives: its mount, the storage kind, and the devices/paths under it."""

    path: str
    resolved_path: str
    kind: str  # nfs cifs lustre gpfs ceph fuse nvme-local nvme-of block-other other unknown
    mount_point: str | None = None
    fstype: str | None = None
    source: str | None = None
    devnum: str | None = None
    block_devices: tuple[str, ...] = ()  # the block device(s) the kind was decided on
    via: tuple[str, ...] = ()  # stacked devices walked through (dm-0, md0, partitions)
    transport: str | None = None  # nfs proto (tcp/rdma) or the NVMe transport(s)
    nfs_server: str | None = None
    nfs_version: str | None = None
    nvme_subsystem: str | None = None
    nvme_controllers: tuple[str, ...] = ()
    nvme_transports: tuple[str, ...] = ()
    controller_states: tuple[tuple[str, str | None], ...] = ()
    ana_states: tuple[tuple[str, str | None], ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def is_network(self) -> bool:
        return self.kind in NETWORK_KINDS

    @property
    def rdma(self) -> bool:
        return self.transport == "rdma" or "rdma" in self.nvme_transports

    def to_dict(self) -> dict[str, Any]:
        d = to_jsonable(self)
        d["is_network"] = self.is_network
        return d


def _norm(path: str) -> str:
    return "/" + posixpath.normpath("/" + (path or "").strip()).lstrip("/")


def find_mount(path: str, mounts: Iterable[Mount]) -> Mount | None:
    """The mount a path is on: longest mount-point prefix; the later of equals wins (overmount)."""
    path = _norm(path)
    best: Mount | None = None
    best_len = -1
    for m in mounts:
        mp = m.mount_point
        under = mp == "/" or path == mp or path.startswith(mp.rstrip("/") + "/")
        if under and len(mp) >= best_len:
            best, best_len = m, len(mp)
    return best


@dataclass
class _Leaf:
    name: str
    real: str
    via: tuple[str, ...]


def _block_leaves(acc: SafeReader, real: str, via: tuple[str, ...], seen: set[str]) -> list[_Leaf]:
    """Walk dm-/md- devices down their slaves/ to the devices that carry the data."""
    name = posixpath.basename(real)
    # A partition's sysfs dir sits inside its disk's dir: decide on the whole disk.
    parent = posixpath.dirname(real)
    if acc.exists(f"{real}/partition") or (
        posixpath.basename(parent).startswith(("nvme", "sd", "vd", "xvd", "hd", "mmcblk"))
        and name.startswith(posixpath.basename(parent))
        and name != posixpath.basename(parent)
    ):
        via = (*via, name)
        real, name = parent, posixpath.basename(parent)
    if real in seen or len(via) > _MAX_SLAVE_DEPTH:
        return []
    seen.add(real)
    slaves = acc.listdir(f"{real}/slaves")
    if slaves and (name.startswith(("dm-", "md")) or "/virtual/block/" in real):
        leaves: list[_Leaf] = []
        for s in slaves:
            leaves.extend(
                _block_leaves(acc, acc.realpath(f"{CLASS_BLOCK}/{s}"), (*via, name), seen)
            )
        return leaves
    return [_Leaf(name, real, via)]


def _nfs_location(base: dict[str, Any], m: Mount) -> StorageLocation:
    server = m.option("addr")
    if server is None and ":" in m.source:
        server = m.source.rsplit(":", 1)[0].strip("[]")
    vers = m.option("vers")
    if vers is None and m.fstype == "nfs4":
        vers = "4"
    return StorageLocation(
        **base,
        kind="nfs",
        transport=m.option("proto") or "tcp",
        nfs_server=server,
        nfs_version=vers,
    )


def classify_path(
    path: str,
    mounts: Iterable[Mount] | MountTable | None,
    reader: SysfsReader | None,
    nvme: NvmeInventory | None = None,
) -> StorageLocation:
    """Classify where `path` lives: network filesystem, local NVMe, NVMe-oF, or other block."""
    try:
        return _classify(path, mounts, reader, nvme)
    except Exception as exc:  # a fact never raises; say why instead
        return StorageLocation(
            path=str(path),
            resolved_path=str(path),
            kind="unknown",
            problems=(f"classification failed: {type(exc).__name__}: {exc}",),
        )


def _classify(
    path: str,
    mounts: Iterable[Mount] | MountTable | None,
    reader: SysfsReader | None,
    nvme: NvmeInventory | None,
) -> StorageLocation:
    """The mount holding `path`, then the first rule that names its storage: the filesystem
    type (network, fuse), else the block devices under it (NVMe-oF, local NVMe, other)."""
    acc = SafeReader(reader) if reader is not None else None
    wanted = _norm(str(path))
    resolved = _norm(acc.realpath(wanted)) if acc else wanted
    m = find_mount(resolved, list(mounts or ()))
    if m is None:
        return StorageLocation(
            path=wanted, resolved_path=resolved, kind="unknown", problems=("no mount found",)
        )
    base: dict[str, Any] = {
        "path": wanted,
        "resolved_path": resolved,
        "mount_point": m.mount_point,
        "fstype": m.fstype,
        "source": m.source,
        "devnum": m.devnum,
    }
    by_fstype = _by_fstype(base, m)
    if by_fstype is not None:
        return by_fstype
    if acc is None:
        return StorageLocation(**base, kind="other", problems=("no reader: block device unknown",))
    return _by_block_device(base, m, acc, reader, nvme)


def _by_fstype(base: dict[str, Any], m: Mount) -> StorageLocation | None:
    """Network and FUSE filesystems are known by their type alone."""
    fstype = m.fstype.lower()
    kind = _FSTYPE_KINDS.get(fstype)
    if kind == "nfs":
        return _nfs_location(base, m)
    if kind is not None:
        return StorageLocation(**base, kind=kind)
    if fstype.startswith("fuse.") or fstype == "fuse":
        return StorageLocation(**base, kind="fuse")
    return None


def _block_device_of(m: Mount, acc: SafeReader, problems: list[str]) -> str | None:
    """The sysfs block device behind a mount: by major:minor, else by its /dev source."""
    real: str | None = None
    if m.devnum and m.major != 0:
        link = f"/sys/dev/block/{m.devnum}"
        real = acc.realpath(link)
        if real == link:
            problems.append(f"{link}: does not resolve")
            real = None
    if real is None and m.source.startswith("/dev/"):
        # /proc/mounts has no major:minor, and btrfs reports an anonymous 0:N; use the source.
        dev_name = posixpath.basename(acc.realpath(m.source))
        candidate = acc.realpath(f"{CLASS_BLOCK}/{dev_name}")
        if candidate != f"{CLASS_BLOCK}/{dev_name}" or acc.exists(candidate):
            real = candidate
    return real


_NvmeLeaf = tuple[_Leaf, "str | None", "str | None", str]  # leaf, subsystem, controller, namespace


def _nvme_leaves(leaves: list[_Leaf]) -> list[_NvmeLeaf]:
    """The leaves that are NVMe namespaces, under a subsystem (multipath) or a controller."""
    out: list[_NvmeLeaf] = []
    for leaf in leaves:
        sm = _SUBSYS_NS_RE.search(leaf.real + "/")
        cm = _CTRL_NS_RE.search(leaf.real + "/")
        if sm:
            out.append((leaf, sm.group(1), None, sm.group(2)))
        elif cm:
            out.append((leaf, None, cm.group(1), cm.group(2)))
    return out


def _by_block_device(
    base: dict[str, Any],
    m: Mount,
    acc: SafeReader,
    reader: SysfsReader | None,
    nvme: NvmeInventory | None,
) -> StorageLocation:
    """Walk the block device's stack to its leaves; NVMe leaves are judged by their transport."""
    problems: list[str] = []
    real = _block_device_of(m, acc, problems)
    if real is None:
        return StorageLocation(**base, kind="other", problems=tuple(problems))
    leaves = _block_leaves(acc, real, (), set())
    if not leaves:
        problems.append(f"{real}: stacked devices loop or are too deep")
        return StorageLocation(**base, kind="block-other", problems=tuple(problems))
    nvme_leaves = _nvme_leaves(leaves)
    via = tuple(dict.fromkeys(v for leaf in leaves for v in leaf.via))
    if not nvme_leaves:
        return StorageLocation(
            **base,
            kind="block-other",
            block_devices=tuple(leaf.name for leaf in leaves),
            via=via,
            problems=tuple(problems),
        )
    inv = nvme if nvme is not None else collect_nvme(reader)  # type: ignore[arg-type]
    return _nvme_location(base, leaves, nvme_leaves, via, inv, acc, problems)


def _nvme_location(
    base: dict[str, Any],
    leaves: list[_Leaf],
    nvme_leaves: list[_NvmeLeaf],
    via: tuple[str, ...],
    inv: NvmeInventory,
    acc: SafeReader,
    problems: list[str],
) -> StorageLocation:
    """NVMe-oF when any controller behind the namespaces uses a fabric transport, else local."""
    controllers: list[str] = []
    subsystem = None
    ana: list[tuple[str, str | None]] = []
    for _leaf, subsys, ctrl, ns in nvme_leaves:
        if subsys:
            subsystem = subsystem or subsys
            sub = inv.subsystem(subsys)
            names = list(sub.controllers) if sub else []
            for p in inv.paths_of(ns):
                ana.append((p.name, p.ana_state))
                names.append(p.controller)
            if not names:
                problems.append(f"{subsys}: no controllers found")
            controllers.extend(names)
        elif ctrl:
            controllers.append(ctrl)
    controllers = list(dict.fromkeys(controllers))
    transports: list[str] = []
    states: list[tuple[str, str | None]] = []
    for cname in controllers:
        c = inv.controller(cname)
        t = c.transport if c else acc.value(f"/sys/class/nvme/{cname}/transport")
        s = c.state if c else acc.value(f"/sys/class/nvme/{cname}/state")
        states.append((cname, s))
        if t:
            transports.append(t)
        else:
            problems.append(f"{cname}: transport unknown")
    transports = list(dict.fromkeys(transports))
    fabric = [t for t in transports if t != "pcie"]
    if fabric:
        kind = "nvme-of"
    elif transports:
        kind = "nvme-local"
    else:
        kind = "nvme-local"
        problems.append("NVMe transport unknown; assumed local")
    if len(nvme_leaves) != len(leaves):
        problems.append("stacked over NVMe and non-NVMe devices")
    return StorageLocation(
        **base,
        kind=kind,
        block_devices=tuple(ns for _leaf, _s, _c, ns in nvme_leaves),
        via=via,
        transport=",".join(transports) or None,
        nvme_subsystem=subsystem,
        nvme_controllers=tuple(controllers),
        nvme_transports=tuple(transports),
        controller_states=tuple(states),
        ana_states=tuple(ana),
        problems=tuple(problems + list(acc.problems)),
    )
