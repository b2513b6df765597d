"""NVMe: controllers, subsystems, namespaces and multipath paths (never reads `nuse`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import to_jsonable
from ascend_audit.facts.sysfs.base import (
    BDF_RE,
    CLASS_NVME,
    CLASS_NVME_SUBSYS,
    CTRL_RE,
    NS_RE,
    PATH_RE,
    SUBSYS_RE,
    SYS_BLOCK,
    SafeReader,
    SysfsReader,
    parse_int,
    parse_numa_node,
    parse_nvme_address,
)
from ascend_audit.facts.sysfs.pci import pci_parent

# ---------------------------------------------------------------------------------------------
# NVMe


@dataclass(frozen=True)
class NvmePath:
    """One multipath path (hidden `nvmeXcYnZ` disk under a controller)."""

    name: str
    controller: str
    head: str  # the multipath head block device, nvmeXnZ
    nsid: int | None
    ana_state: str | None
    ana_grpid: int | None
    numa_nodes: str | None


@dataclass(frozen=True)
class NvmeController:
    """An NVMe controller (PCIe or fabrics)."""

    name: str
    transport: str | None
    address: str | None
    traddr: str | None
    trsvcid: str | None
    host_traddr: str | None
    host_iface: str | None
    src_addr: str | None
    state: str | None
    subsysnqn: str | None
    model: str | None
    serial: str | None
    firmware_rev: str | None
    cntlid: int | None
    numa_node: int | None
    pci_bdf: str | None
    subsystem: str | None
    ctrl_loss_tmo: str | None
    reconnect_delay: str | None
    kato: int | None
    namespaces: tuple[str, ...]  # non-multipath namespace block devices under this controller
    paths: tuple[NvmePath, ...]
    sysfs_path: str

    @property
    def fabrics(self) -> bool:
        return self.transport in ("rdma", "tcp", "fc", "loop")


@dataclass(frozen=True)
class NvmeNamespace:
    """A namespace block device: a multipath head (under a subsystem) or a plain namespace."""

    name: str
    subsystem: str | None
    controller: str | None  # set for a non-multipath namespace
    nsid: int | None
    dev: str | None  # major:minor
    size_sectors: int | None  # 512-byte sectors
    wwid: str | None
    sysfs_path: str

    @property
    def size_bytes(self) -> int | None:
        return self.size_sectors * 512 if self.size_sectors is not None else None


@dataclass(frozen=True)
class NvmeSubsystem:
    """An NVMe subsystem with its controllers and namespace heads."""

    name: str
    subsysnqn: str | None
    iopolicy: str | None
    model: str | None
    subsystype: str | None
    controllers: tuple[str, ...]
    namespaces: tuple[str, ...]
    sysfs_path: str


@dataclass(frozen=True)
class NvmeInventory:
    """NVMe controllers, subsystems, namespaces and multipath paths from sysfs."""

    controllers: tuple[NvmeController, ...]
    subsystems: tuple[NvmeSubsystem, ...]
    namespaces: tuple[NvmeNamespace, ...]
    multipath: bool | None  # nvme_core native multipath parameter
    problems: tuple[str, ...] = ()

    def controller(self, name: str) -> NvmeController | None:
        return next((c for c in self.controllers if c.name == name), None)

    def subsystem(self, name: str) -> NvmeSubsystem | None:
        return next((s for s in self.subsystems if s.name == name), None)

    def namespace(self, name: str) -> NvmeNamespace | None:
        return next((n for n in self.namespaces if n.name == name), None)

    def namespace_by_dev(self, dev: str) -> NvmeNamespace | None:
        return next((n for n in self.namespaces if n.dev == dev), None)

    def paths_of(self, head: str) -> tuple[NvmePath, ...]:
        """All multipath paths of a head namespace, across controllers."""
        return tuple(p for c in self.controllers for p in c.paths if p.head == head)

    def controllers_of(self, namespace: str) -> tuple[NvmeController, ...]:
        """Controllers that serve a namespace block device (head or plain)."""
        ns = self.namespace(namespace)
        if ns is None:
            return ()
        if ns.controller:
            c = self.controller(ns.controller)
            return (c,) if c else ()
        names = {p.controller for p in self.paths_of(namespace)}
        sub = self.subsystem(ns.subsystem) if ns.subsystem else None
        if sub:
            names.update(sub.controllers)
        return tuple(c for c in self.controllers if c.name in names)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)


def _strip(value: str | None) -> str | None:
    if value is None:
        return None
    s = value.strip()
    return s or None


def _path_head(path_name: str) -> str:
    m = PATH_RE.match(path_name)
    return f"nvme{m.group(1)}n{m.group(3)}" if m else path_name


def collect_nvme(reader: SysfsReader) -> NvmeInventory:
    """NVMe controllers/subsystems/namespaces/paths from sysfs; never reads `nuse`."""
    acc = SafeReader(reader)
    subsystems: list[NvmeSubsystem] = []
    namespaces: dict[str, NvmeNamespace] = {}
    ctrl_to_subsys: dict[str, str] = {}

    def namespace(name: str, path: str, subsys: str | None, ctrl: str | None) -> NvmeNamespace:
        return NvmeNamespace(
            name=name,
            subsystem=subsys,
            controller=ctrl,
            nsid=parse_int(acc.value(f"{path}/nsid", quiet=True)),
            dev=_strip(acc.value(f"{path}/dev", quiet=True)),
            size_sectors=parse_int(acc.value(f"{path}/size", quiet=True)),
            wwid=_strip(acc.value(f"{path}/wwid", quiet=True)),
            sysfs_path=acc.realpath(path),
        )

    for sname in acc.listdir(CLASS_NVME_SUBSYS):
        if not SUBSYS_RE.match(sname):
            continue
        spath = f"{CLASS_NVME_SUBSYS}/{sname}"
        entries = acc.listdir(spath)
        ctrls = tuple(e for e in entries if CTRL_RE.match(e))
        heads = tuple(e for e in entries if NS_RE.match(e))
        for c in ctrls:
            ctrl_to_subsys[c] = sname
        for h in heads:
            namespaces[h] = namespace(h, f"{spath}/{h}", sname, None)
        subsystems.append(
            NvmeSubsystem(
                name=sname,
                subsysnqn=_strip(acc.value(f"{spath}/subsysnqn", quiet=True)),
                iopolicy=_strip(acc.value(f"{spath}/iopolicy", quiet=True)),
                model=_strip(acc.value(f"{spath}/model", quiet=True)),
                subsystype=_strip(acc.value(f"{spath}/subsystype", quiet=True)),
                controllers=ctrls,
                namespaces=heads,
                sysfs_path=acc.realpath(spath),
            )
        )

    controllers: list[NvmeController] = []
    for cname in acc.listdir(CLASS_NVME):
        if not CTRL_RE.match(cname):
            continue
        cpath = f"{CLASS_NVME}/{cname}"
        real = acc.realpath(cpath)
        transport = _strip(acc.value(f"{cpath}/transport"))
        address = _strip(acc.value(f"{cpath}/address", quiet=True))
        addr = parse_nvme_address(address)
        entries = acc.listdir(cpath)
        plain: list[str] = []
        paths: list[NvmePath] = []
        for e in entries:
            if PATH_RE.match(e):
                p = f"{cpath}/{e}"
                paths.append(
                    NvmePath(
                        name=e,
                        controller=cname,
                        head=_path_head(e),
                        nsid=parse_int(acc.value(f"{p}/nsid", quiet=True)),
                        ana_state=_strip(acc.value(f"{p}/ana_state", quiet=True)),
                        ana_grpid=parse_int(acc.value(f"{p}/ana_grpid", quiet=True)),
                        numa_nodes=_strip(acc.value(f"{p}/numa_nodes", quiet=True)),
                    )
                )
            elif NS_RE.match(e):
                plain.append(e)
                if e not in namespaces:
                    namespaces[e] = namespace(e, f"{cpath}/{e}", None, cname)
        pci_bdf = None
        if transport == "pcie":
            pci_bdf = pci_parent(real)
            if pci_bdf is None and address and BDF_RE.match(address):
                pci_bdf = address
        state = _strip(acc.value(f"{cpath}/state"))
        if transport is None:
            acc.problems.append(f"{cname}: transport unknown")
        controllers.append(
            NvmeController(
                name=cname,
                transport=transport,
                address=address,
                traddr=addr.get("traddr"),
                trsvcid=addr.get("trsvcid"),
                host_traddr=addr.get("host_traddr"),
                host_iface=addr.get("host_iface"),
                src_addr=addr.get("src_addr"),
                state=state,
                subsysnqn=_strip(acc.value(f"{cpath}/subsysnqn", quiet=True)),
                model=_strip(acc.value(f"{cpath}/model", quiet=True)),
                serial=_strip(acc.value(f"{cpath}/serial", quiet=True)),
                firmware_rev=_strip(acc.value(f"{cpath}/firmware_rev", quiet=True)),
                cntlid=parse_int(acc.value(f"{cpath}/cntlid", quiet=True)),
                numa_node=parse_numa_node(acc.value(f"{cpath}/numa_node", quiet=True)),
                pci_bdf=pci_bdf,
                subsystem=ctrl_to_subsys.get(cname),
                ctrl_loss_tmo=_strip(acc.value(f"{cpath}/ctrl_loss_tmo", quiet=True)),
                reconnect_delay=_strip(acc.value(f"{cpath}/reconnect_delay", quiet=True)),
                kato=parse_int(acc.value(f"{cpath}/kato", quiet=True)),
                namespaces=tuple(plain),
                paths=tuple(paths),
                sysfs_path=real,
            )
        )

    # /sys/block catches namespaces whose parent listing failed; hidden paths are skipped.
    for bname in acc.listdir(SYS_BLOCK):
        if not NS_RE.match(bname) or bname in namespaces:
            continue
        real = acc.realpath(f"{SYS_BLOCK}/{bname}")
        parts = real.split("/")
        parent = parts[-2] if len(parts) >= 2 else ""
        subsys = parent if SUBSYS_RE.match(parent) else None
        ctrl = parent if CTRL_RE.match(parent) else None
        namespaces[bname] = namespace(bname, f"{SYS_BLOCK}/{bname}", subsys, ctrl)

    mp = _strip(acc.value("/sys/module/nvme_core/parameters/multipath", quiet=True))
    multipath = None if mp is None else mp.upper() in ("Y", "1")
    return NvmeInventory(
        controllers=tuple(controllers),
        subsystems=tuple(subsystems),
        namespaces=tuple(sorted(namespaces.values(), key=lambda n: _natural(n.name))),
        multipath=multipath,
        problems=tuple(acc.problems),
    )


def _natural(name: str) -> tuple[Any, ...]:
    return tuple(int(t) if t.isdecimal() else t for t in re.split(r"(\d+)", name))
