"""PCI: Ascend NPU functions, RDMA devices and network interfaces, with their links."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import to_jsonable
from ascend_audit.facts.sysfs.base import (
    ASCEND_DEVICE_IDS,
    ASCEND_VF_DEVICE_IDS,
    BDF_RE,
    HUAWEI_VENDOR,
    PCI_DEVICES,
    SafeReader,
    SysfsReader,
    family_of,
    parse_cpulist,
    parse_hex_id,
    parse_int,
    parse_link_speed,
    parse_link_width,
    parse_numa_node,
)

# ---------------------------------------------------------------------------------------------
# PCI: Ascend NPUs, RDMA devices, network interfaces


@dataclass(frozen=True)
class PcieLink:
    """A PCIe link as sysfs reports it (speeds in GT/s)."""

    current_speed: float | None = None
    current_width: int | None = None
    max_speed: float | None = None
    max_width: int | None = None
    current_speed_raw: str | None = None
    max_speed_raw: str | None = None

    @property
    def width_reduced(self) -> bool:
        """Trained narrower than it can: the strong downtraining signal."""
        return bool(self.current_width and self.max_width and self.current_width < self.max_width)

    @property
    def speed_reduced(self) -> bool:
        """Running slower than it can (may also be idle power saving)."""
        return bool(self.current_speed and self.max_speed and self.current_speed < self.max_speed)

    @property
    def known(self) -> bool:
        return any(
            v is not None
            for v in (self.current_speed, self.current_width, self.max_speed, self.max_width)
        )


@dataclass(frozen=True)
class PciNpu:
    """One Ascend PCI function."""

    bdf: str
    vendor_id: str | None
    device_id: str | None
    family: str | None
    huawei_vendor: bool
    virtual_function: bool
    subsystem_vendor: str | None
    subsystem_device: str | None
    chips: int  # davinci chips behind this function (2 on an Atlas 300I Duo)
    numa_node: int | None
    numa_node_raw: str | None
    local_cpulist: tuple[int, ...] | None
    local_cpulist_raw: str | None
    link: PcieLink
    driver: str | None
    upstream_bdf: str | None
    upstream_link: PcieLink | None
    sysfs_path: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RdmaDevice:
    """An RDMA device from /sys/class/infiniband and its PCI parent."""

    name: str
    pci_bdf: str | None
    numa_node: int | None
    netdevs: tuple[str, ...]
    link: PcieLink | None
    sysfs_path: str


@dataclass(frozen=True)
class NetInterface:
    """A network interface backed by a device (virtual interfaces have no PCI address)."""

    name: str
    pci_bdf: str | None
    numa_node: int | None
    operstate: str | None
    speed_mbps: int | None
    mtu: int | None
    rdma_devices: tuple[str, ...]
    sysfs_path: str


@dataclass(frozen=True)
class PciInventory:
    """Ascend PCI functions plus the RDMA and network devices they share the node with."""

    npus: tuple[PciNpu, ...]
    rdma_devices: tuple[RdmaDevice, ...]
    net_interfaces: tuple[NetInterface, ...]
    problems: tuple[str, ...] = ()

    @property
    def chip_count(self) -> int:
        """Chips expected from the physical functions (VFs excluded)."""
        return sum(n.chips for n in self.npus if not n.virtual_function)

    def npus_on_node(self, node: int) -> tuple[PciNpu, ...]:
        return tuple(n for n in self.npus if n.numa_node == node)

    def npu(self, bdf: str) -> PciNpu | None:
        return next((n for n in self.npus if n.bdf == bdf), None)

    def to_dict(self) -> dict[str, Any]:
        d = to_jsonable(self)
        d["chip_count"] = self.chip_count
        return d


def _read_link(acc: SafeReader, dev: str) -> PcieLink:
    cur = acc.value(f"{dev}/current_link_speed", quiet=True)
    mx = acc.value(f"{dev}/max_link_speed", quiet=True)
    return PcieLink(
        current_speed=parse_link_speed(cur),
        current_width=parse_link_width(acc.value(f"{dev}/current_link_width", quiet=True)),
        max_speed=parse_link_speed(mx),
        max_width=parse_link_width(acc.value(f"{dev}/max_link_width", quiet=True)),
        current_speed_raw=cur,
        max_speed_raw=mx,
    )


def _hex_str(value: int | None, width: int = 4) -> str | None:
    return None if value is None else f"0x{value:0{width}x}"


def pci_parent(real: str) -> str | None:
    """The nearest ancestor of a sysfs device path that is a PCI function."""
    parts = [p for p in real.split("/") if p]
    for part in reversed(parts[:-1]):
        if BDF_RE.match(part):
            return part
    return None


def _pci_of(acc: SafeReader, class_path: str) -> tuple[str | None, str]:
    """PCI address a class device sits on (via its realpath), and the realpath."""
    real = acc.realpath(class_path)
    parts = [p for p in real.split("/") if p]
    for part in reversed(parts):
        if BDF_RE.match(part):
            return part, real
    return None, real


def _numa_of_pci(acc: SafeReader, bdf: str | None) -> int | None:
    if not bdf:
        return None
    return parse_numa_node(acc.value(f"{PCI_DEVICES}/{bdf}/numa_node", quiet=True))


def _collect_npu(acc: SafeReader, bdf: str, vendor: int, device: int) -> PciNpu:
    dev = f"{PCI_DEVICES}/{bdf}"
    notes: list[str] = []
    huawei = vendor == HUAWEI_VENDOR
    if not huawei:
        notes.append(
            f"vendor {_hex_str(vendor)} is not Huawei (0x19e5); "
            f"accepted on its Ascend device id {_hex_str(device)}"
        )
    sub_vendor = parse_hex_id(acc.value(f"{dev}/subsystem_vendor", quiet=True))
    sub_device = parse_hex_id(acc.value(f"{dev}/subsystem_device", quiet=True))
    vf = device in ASCEND_VF_DEVICE_IDS or acc.readlink(f"{dev}/physfn") is not None
    chips = 2 if (device in (0xD500, 0xD501) and sub_device == 0x0110) else 1
    numa_raw = acc.value(f"{dev}/numa_node", quiet=True)
    cpus_raw = acc.value(f"{dev}/local_cpulist", quiet=True)
    cpus = parse_cpulist(cpus_raw)
    if cpus_raw is not None and cpus is None:
        notes.append(f"local_cpulist unparseable: {cpus_raw[:80]!r}")
    if numa_raw is not None and parse_int(numa_raw) is None:
        notes.append(f"numa_node unparseable: {numa_raw[:80]!r}")
    drv_link = acc.readlink(f"{dev}/driver")
    real = acc.realpath(dev)
    parent = posixpath.basename(posixpath.dirname(real))
    upstream = parent if BDF_RE.match(parent) and parent != bdf else None
    up_link = None
    if upstream:
        candidate = _read_link(acc, posixpath.dirname(real))
        up_link = candidate if candidate.known else None
    return PciNpu(
        bdf=bdf,
        vendor_id=_hex_str(vendor),
        device_id=_hex_str(device),
        family=family_of(device),
        huawei_vendor=huawei,
        virtual_function=vf,
        subsystem_vendor=_hex_str(sub_vendor),
        subsystem_device=_hex_str(sub_device),
        chips=chips,
        numa_node=parse_numa_node(numa_raw),
        numa_node_raw=numa_raw,
        local_cpulist=cpus,
        local_cpulist_raw=cpus_raw,
        link=_read_link(acc, dev),
        driver=posixpath.basename(drv_link.rstrip("/")) if drv_link else None,
        upstream_bdf=upstream,
        upstream_link=up_link,
        sysfs_path=real,
        notes=tuple(notes),
    )


def collect_pci_npus(reader: SysfsReader) -> PciInventory:
    """Ascend PCI functions, RDMA devices and network interfaces, read from sysfs."""
    acc = SafeReader(reader)
    npus: list[PciNpu] = []
    entries = acc.listdir(PCI_DEVICES)
    if not entries:
        acc.problems.append(f"{PCI_DEVICES}: missing or empty; no PCI functions visible")
    for bdf in entries:
        if not BDF_RE.match(bdf):
            continue
        dev = f"{PCI_DEVICES}/{bdf}"
        vendor_raw = acc.value(f"{dev}/vendor")
        device_raw = acc.value(f"{dev}/device")
        vendor, device = parse_hex_id(vendor_raw), parse_hex_id(device_raw)
        if vendor is None or device is None:
            acc.problems.append(
                f"{dev}: vendor/device unreadable or not hex "
                f"({(vendor_raw or '')[:40]!r}/{(device_raw or '')[:40]!r})"
            )
            continue
        if device not in ASCEND_DEVICE_IDS:
            if vendor == HUAWEI_VENDOR:
                cls = parse_hex_id(acc.value(f"{dev}/class", quiet=True))
                if cls is not None and cls >> 16 == 0x12:
                    acc.problems.append(
                        f"{bdf}: Huawei processing accelerator with unknown device id "
                        f"{_hex_str(device)} (a newer Ascend model?)"
                    )
            continue
        if vendor != HUAWEI_VENDOR:
            # A partner board keeps the device id; other vendors' unrelated devices with the same
            # id are told apart by class (Ascend functions are processing accelerators, 0x12).
            cls = parse_hex_id(acc.value(f"{dev}/class", quiet=True))
            if cls is not None and cls >> 16 != 0x12:
                continue
        npus.append(_collect_npu(acc, bdf, vendor, device))

    rdma: list[RdmaDevice] = []
    for name in acc.listdir("/sys/class/infiniband"):
        path = f"/sys/class/infiniband/{name}"
        parent, _ = _pci_of(acc, f"{path}/device")
        if parent is None:
            parent, _ = _pci_of(acc, path)
        netdevs = tuple(acc.listdir(f"{PCI_DEVICES}/{parent}/net")) if parent else ()
        link = _read_link(acc, f"{PCI_DEVICES}/{parent}") if parent else None
        rdma.append(
            RdmaDevice(
                name=name,
                pci_bdf=parent,
                numa_node=_numa_of_pci(acc, parent),
                netdevs=netdevs,
                link=link if link is not None and link.known else None,
                sysfs_path=acc.realpath(path),
            )
        )
    rdma_by_bdf: dict[str, list[str]] = {}
    for r in rdma:
        if r.pci_bdf:
            rdma_by_bdf.setdefault(r.pci_bdf, []).append(r.name)

    nets: list[NetInterface] = []
    for name in acc.listdir("/sys/class/net"):
        path = f"/sys/class/net/{name}"
        if acc.readlink(f"{path}/device") is None and not acc.exists(f"{path}/device"):
            continue  # virtual interface (lo, bridges, veth): no device behind it
        parent, _ = _pci_of(acc, f"{path}/device")
        nets.append(
            NetInterface(
                name=name,
                pci_bdf=parent,
                numa_node=_numa_of_pci(acc, parent),
                operstate=acc.value(f"{path}/operstate", quiet=True),
                # `speed` reads EINVAL on a down link; that is not a problem worth reporting.
                speed_mbps=_positive(parse_int(acc.value(f"{path}/speed", quiet=True))),
                mtu=parse_int(acc.value(f"{path}/mtu", quiet=True)),
                rdma_devices=tuple(rdma_by_bdf.get(parent or "", ())),
                sysfs_path=acc.realpath(path),
            )
        )
    return PciInventory(tuple(npus), tuple(rdma), tuple(nets), tuple(acc.problems))


def _positive(value: int | None) -> int | None:
    return value if value is not None and value > 0 else None
