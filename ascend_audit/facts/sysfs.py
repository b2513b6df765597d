"""Driver-layer facts from sysfs: Ascend PCI functions, NUMA, NVMe, RDMA NICs and /dev nodes."""

from __future__ import annotations

import posixpath
import re
import stat as stat_mod
from dataclasses import dataclass
from typing import Any, Protocol

from ascend_audit.facts.common import to_jsonable

HUAWEI_VENDOR = 0x19E5

# Ascend PCI device ids -> chip family (pci.ids has no names for them).
ASCEND_DEVICE_IDS: dict[int, str] = {
    0xD100: "310",
    0xD500: "310P",
    0xD501: "310P",
    0xD801: "910",
    0xD802: "910B",
    0xD804: "910B",
    0xD805: "910B",
    0xD803: "910_93",
    0xD806: "950",
}
ASCEND_VF_DEVICE_IDS = frozenset({0xD805})

PCI_DEVICES = "/sys/bus/pci/devices"
NODE_DIR = "/sys/devices/system/node"
CLASS_NVME = "/sys/class/nvme"
CLASS_NVME_SUBSYS = "/sys/class/nvme-subsystem"
CLASS_BLOCK = "/sys/class/block"
SYS_BLOCK = "/sys/block"
DEV_CONTROL_NODES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")

# Reading these attributes makes the kernel talk to the device (nuse issues an Identify command).
FORBIDDEN_ATTRS = frozenset({"nuse"})

MAX_CPUS = 1 << 16  # a cpulist naming more CPUs than this is garbage, not a machine

_BDF_RE = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_SPEED_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*GT/s\b", re.IGNORECASE)
_HEX_RE = re.compile(r"^\s*(?:0[xX])?([0-9a-fA-F]{1,8})\s*$")
_CTRL_RE = re.compile(r"^nvme(\d+)$")
_NS_RE = re.compile(r"^nvme(\d+)n(\d+)$")
_PATH_RE = re.compile(r"^nvme(\d+)c(\d+)n(\d+)$")
_SUBSYS_RE = re.compile(r"^nvme-subsys(\d+)$")
_DAVINCI_RE = re.compile(r"^davinci(\d+)$")


class SysfsReader(Protocol):
    """The slice of the engine's Host that these gatherers need (node paths, never raises)."""

    def read_text(self, path: str) -> Any: ...

    def listdir(self, path: str) -> list[str] | None: ...

    def realpath(self, path: str) -> str: ...

    def readlink(self, path: str) -> str | None: ...

    def exists(self, path: str) -> bool: ...


class StatReader(SysfsReader, Protocol):
    """A SysfsReader that can also stat a node path."""

    def stat(self, path: str) -> Any: ...


def parse_link_speed(text: str | None) -> float | None:
    """PCIe link speed in GT/s from `16.0 GT/s PCIe`, old-kernel `16 GT/s`; None for `Unknown`."""
    if not isinstance(text, str):
        return None
    m = _SPEED_RE.match(text)
    if not m:
        return None
    try:
        value = float(m.group(1))
    except ValueError:
        return None
    return value if 0 < value < 1000 else None


def parse_link_width(text: str | None) -> int | None:
    """PCIe link width from `16` (or lspci-style `x16`); None when unreadable."""
    if not isinstance(text, str):
        return None
    s = text.strip().lower().removeprefix("x")
    if not s.isdecimal() or len(s) > 3:
        return None
    return int(s)


def parse_hex_id(text: str | None) -> int | None:
    """A sysfs hex id like `0x19e5` (or bare `19e5`) as an int; None when not hex."""
    if not isinstance(text, str):
        return None
    m = _HEX_RE.match(text)
    return int(m.group(1), 16) if m else None


def parse_int(text: str | None) -> int | None:
    """A decimal integer attribute; None when not one."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if not re.fullmatch(r"-?\d{1,19}", s):
        return None
    return int(s)


def parse_numa_node(text: str | None) -> int | None:
    """A `numa_node` value; `-1` (the kernel's unknown) and garbage give None."""
    value = parse_int(text)
    return value if value is not None and value >= 0 else None


def parse_cpu_ranges(text: str | None) -> tuple[tuple[int, int], ...] | None:
    """A kernel cpulist like `0-23,48-71` as inclusive ranges; `` gives (), garbage None."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if not s:
        return ()
    out: list[tuple[int, int]] = []
    for part in s.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d{1,7})(?:-(\d{1,7}))?", part)
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo or hi >= MAX_CPUS:
            return None
        out.append((lo, hi))
    return tuple(out)


def parse_cpulist(text: str | None) -> tuple[int, ...] | None:
    """A kernel cpulist like `0-23,48-71` as sorted CPU numbers; `` gives (), garbage None."""
    ranges = parse_cpu_ranges(text)
    if ranges is None:
        return None
    cpus: set[int] = set()
    for lo, hi in ranges:
        cpus.update(range(lo, hi + 1))
    return tuple(sorted(cpus))


def format_cpulist(cpus: tuple[int, ...] | list[int] | None) -> str:
    """CPU numbers back to the kernel's compact `0-23,48-71` form."""
    if not cpus:
        return ""
    nums = sorted(set(cpus))
    parts: list[str] = []
    start = prev = nums[0]
    for n in nums[1:]:
        if n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = n
    parts.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(parts)


def parse_nvme_address(text: str | None) -> dict[str, str]:
    """An NVMe controller `address` (`traddr=..,trsvcid=..` or a PCI BDF) as key/value pairs."""
    if not isinstance(text, str):
        return {}
    s = text.strip()
    if not s:
        return {}
    if _BDF_RE.match(s) or re.fullmatch(r"[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", s):
        return {"traddr": s}
    out: dict[str, str] = {}
    # nvme-cli 1.x prints the fields space-separated, the kernel comma-separated.
    for item in re.split(r"[,\s]+", s):
        if "=" in item:
            key, _, value = item.partition("=")
            if key and key not in out:
                out[key.strip()] = value.strip()
    return out


def family_of(device_id: int | None) -> str | None:
    """Ascend chip family (`910B`, `310P`, …) of a PCI device id; None when not an Ascend id."""
    if device_id is None:
        return None
    return ASCEND_DEVICE_IDS.get(device_id)


def is_bdf(text: str) -> bool:
    """Whether text is a PCI address like `0000:01:00.0`."""
    return bool(_BDF_RE.match(text or ""))


# ---------------------------------------------------------------------------------------------
# safe access to a reader: facts never raise, whatever the reader does


def _is_missing(error: str | None) -> bool:
    e = (error or "").lower()
    return any(k in e for k in ("no such file", "not found", "enoent", "does not exist", "missing"))


class _Access:
    """Wraps a reader: catches everything, remembers unexpected read errors as problems."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.problems: list[str] = []

    def read(self, path: str, *, quiet: bool = False) -> str | None:
        if posixpath.basename(path) in FORBIDDEN_ATTRS:
            return None
        try:
            res = self.reader.read_text(path)
        except Exception as exc:
            self.problems.append(f"{path}: reader raised {type(exc).__name__}: {exc}")
            return None
        text = getattr(res, "text", None) if not isinstance(res, str) else res
        if text is None:
            err = getattr(res, "error", None)
            if not quiet and err and not _is_missing(err):
                self.problems.append(f"{path}: unreadable ({err})")
            return None
        if not isinstance(text, str):
            return None
        return text

    def value(self, path: str, *, quiet: bool = False) -> str | None:
        """A one-value attribute, trailing newline and surrounding blanks removed."""
        text = self.read(path, quiet=quiet)
        return text.strip() if text is not None else None

    def listdir(self, path: str) -> list[str]:
        try:
            entries = self.reader.listdir(path)
        except Exception as exc:
            self.problems.append(f"{path}: reader raised {type(exc).__name__}: {exc}")
            return []
        if not entries:
            return []
        return sorted(e for e in entries if isinstance(e, str))

    def realpath(self, path: str) -> str:
        try:
            out = self.reader.realpath(path)
        except Exception:
            return path
        return out if isinstance(out, str) and out else path

    def readlink(self, path: str) -> str | None:
        try:
            out = self.reader.readlink(path)
        except Exception:
            return None
        return out if isinstance(out, str) and out else None

    def exists(self, path: str) -> bool:
        try:
            return bool(self.reader.exists(path))
        except Exception:
            return False

    def stat(self, path: str) -> Any:
        fn = getattr(self.reader, "stat", None)
        if fn is None:
            return None
        try:
            return fn(path)
        except Exception:
            return None


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


def _read_link(acc: _Access, dev: str) -> PcieLink:
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


def _pci_parent(real: str) -> str | None:
    """The nearest ancestor of a sysfs device path that is a PCI function."""
    parts = [p for p in real.split("/") if p]
    for part in reversed(parts[:-1]):
        if _BDF_RE.match(part):
            return part
    return None


def _pci_of(acc: _Access, class_path: str) -> tuple[str | None, str]:
    """PCI address a class device sits on (via its realpath), and the realpath."""
    real = acc.realpath(class_path)
    parts = [p for p in real.split("/") if p]
    for part in reversed(parts):
        if _BDF_RE.match(part):
            return part, real
    return None, real


def _numa_of_pci(acc: _Access, bdf: str | None) -> int | None:
    if not bdf:
        return None
    return parse_numa_node(acc.value(f"{PCI_DEVICES}/{bdf}/numa_node", quiet=True))


def _collect_npu(acc: _Access, bdf: str, vendor: int, device: int) -> PciNpu:
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
    upstream = parent if _BDF_RE.match(parent) and parent != bdf else None
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
    acc = _Access(reader)
    npus: list[PciNpu] = []
    entries = acc.listdir(PCI_DEVICES)
    if not entries:
        acc.problems.append(f"{PCI_DEVICES}: missing or empty; no PCI functions visible")
    for bdf in entries:
        if not _BDF_RE.match(bdf):
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
        bdf, _ = _pci_of(acc, f"{path}/device")
        if bdf is None:
            bdf, _ = _pci_of(acc, path)
        netdevs = tuple(acc.listdir(f"{PCI_DEVICES}/{bdf}/net")) if bdf else ()
        link = _read_link(acc, f"{PCI_DEVICES}/{bdf}") if bdf else None
        rdma.append(
            RdmaDevice(
                name=name,
                pci_bdf=bdf,
                numa_node=_numa_of_pci(acc, bdf),
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
        bdf, _ = _pci_of(acc, f"{path}/device")
        nets.append(
            NetInterface(
                name=name,
                pci_bdf=bdf,
                numa_node=_numa_of_pci(acc, bdf),
                operstate=acc.value(f"{path}/operstate", quiet=True),
                # `speed` reads EINVAL on a down link; that is not a problem worth reporting.
                speed_mbps=_positive(parse_int(acc.value(f"{path}/speed", quiet=True))),
                mtu=parse_int(acc.value(f"{path}/mtu", quiet=True)),
                rdma_devices=tuple(rdma_by_bdf.get(bdf or "", ())),
                sysfs_path=acc.realpath(path),
            )
        )
    return PciInventory(tuple(npus), tuple(rdma), tuple(nets), tuple(acc.problems))


def _positive(value: int | None) -> int | None:
    return value if value is not None and value > 0 else None


# ---------------------------------------------------------------------------------------------
# NUMA


@dataclass(frozen=True)
class NumaNode:
    """One NUMA node and its CPUs."""

    node: int
    cpus: tuple[int, ...] | None
    cpulist_raw: str | None


@dataclass(frozen=True)
class NumaInfo:
    """NUMA topology: online nodes and each node's CPUs."""

    online: tuple[int, ...] | None
    online_raw: str | None
    nodes: tuple[NumaNode, ...]
    cpus_online: tuple[int, ...] | None
    problems: tuple[str, ...] = ()

    def node_of_cpu(self, cpu: int) -> int | None:
        for n in self.nodes:
            if n.cpus and cpu in n.cpus:
                return n.node
        return None

    def cpus_of(self, node: int) -> tuple[int, ...] | None:
        return next((n.cpus for n in self.nodes if n.node == node), None)

    def to_dict(self) -> dict[str, Any]:
        # Lists of hundreds of CPU numbers are unreadable evidence; keep the compact form.
        return {
            "online": list(self.online) if self.online is not None else None,
            "online_raw": self.online_raw,
            "nodes": [
                {
                    "node": n.node,
                    "cpulist": format_cpulist(n.cpus) if n.cpus is not None else None,
                    "cpulist_raw": n.cpulist_raw,
                    "cpu_count": len(n.cpus) if n.cpus is not None else None,
                }
                for n in self.nodes
            ],
            "cpus_online": format_cpulist(self.cpus_online) if self.cpus_online else None,
            "problems": list(self.problems),
        }


def collect_numa(reader: SysfsReader) -> NumaInfo:
    """NUMA nodes from /sys/devices/system/node and online CPUs."""
    acc = _Access(reader)
    online_raw = acc.value(f"{NODE_DIR}/online")
    online_ranges = parse_cpu_ranges(online_raw)
    online = parse_cpulist(online_raw) if online_ranges is not None else None
    if online_raw is None:
        acc.problems.append(f"{NODE_DIR}/online: absent (kernel without NUMA, or not sysfs)")
    elif online is None:
        acc.problems.append(f"{NODE_DIR}/online: unparseable {online_raw[:80]!r}")
    ids: set[int] = set(online or ())
    for entry in acc.listdir(NODE_DIR):
        m = re.fullmatch(r"node(\d{1,5})", entry)
        if m:
            ids.add(int(m.group(1)))
    nodes: list[NumaNode] = []
    for node in sorted(ids):
        raw = acc.value(f"{NODE_DIR}/node{node}/cpulist")
        cpus = parse_cpulist(raw)
        if raw is not None and cpus is None:
            acc.problems.append(f"node{node}/cpulist: unparseable {raw[:80]!r}")
        nodes.append(NumaNode(node, cpus, raw))
    cpus_online = parse_cpulist(acc.value("/sys/devices/system/cpu/online", quiet=True))
    return NumaInfo(
        online=tuple(online) if online is not None else None,
        online_raw=online_raw,
        nodes=tuple(nodes),
        cpus_online=cpus_online,
        problems=tuple(acc.problems),
    )


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
    m = _PATH_RE.match(path_name)
    return f"nvme{m.group(1)}n{m.group(3)}" if m else path_name


def collect_nvme(reader: SysfsReader) -> NvmeInventory:
    """NVMe controllers/subsystems/namespaces/paths from sysfs; never reads `nuse`."""
    acc = _Access(reader)
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
        if not _SUBSYS_RE.match(sname):
            continue
        spath = f"{CLASS_NVME_SUBSYS}/{sname}"
        entries = acc.listdir(spath)
        ctrls = tuple(e for e in entries if _CTRL_RE.match(e))
        heads = tuple(e for e in entries if _NS_RE.match(e))
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
        if not _CTRL_RE.match(cname):
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
            if _PATH_RE.match(e):
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
            elif _NS_RE.match(e):
                plain.append(e)
                if e not in namespaces:
                    namespaces[e] = namespace(e, f"{cpath}/{e}", None, cname)
        pci_bdf = None
        if transport == "pcie":
            pci_bdf = _pci_parent(real)
            if pci_bdf is None and address and _BDF_RE.match(address):
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
        if not _NS_RE.match(bname) or bname in namespaces:
            continue
        real = acc.realpath(f"{SYS_BLOCK}/{bname}")
        parts = real.split("/")
        parent = parts[-2] if len(parts) >= 2 else ""
        subsys = parent if _SUBSYS_RE.match(parent) else None
        ctrl = parent if _CTRL_RE.match(parent) else None
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


# ---------------------------------------------------------------------------------------------
# /dev nodes


@dataclass(frozen=True)
class DevNode:
    """One device node and its ownership."""

    path: str
    exists: bool
    owner: str | None = None
    group: str | None = None
    uid: int | None = None
    gid: int | None = None
    mode: str | None = None  # permission bits as octal, e.g. "0660"
    is_char_device: bool | None = None


@dataclass(frozen=True)
class DevNodes:
    """The Ascend device nodes: /dev/davinciN and the control nodes."""

    davinci: tuple[DevNode, ...]
    control: tuple[DevNode, ...]
    problems: tuple[str, ...] = ()

    @property
    def davinci_indices(self) -> tuple[int, ...]:
        out = []
        for n in self.davinci:
            m = _DAVINCI_RE.match(posixpath.basename(n.path))
            if m and n.exists:
                out.append(int(m.group(1)))
        return tuple(sorted(out))

    @property
    def missing_control(self) -> tuple[str, ...]:
        return tuple(n.path for n in self.control if not n.exists)

    def node(self, path: str) -> DevNode | None:
        return next((n for n in (*self.davinci, *self.control) if n.path == path), None)

    def to_dict(self) -> dict[str, Any]:
        d = to_jsonable(self)
        d["davinci_indices"] = list(self.davinci_indices)
        return d


def _mode_str(mode: Any) -> str | None:
    if isinstance(mode, int) and not isinstance(mode, bool):
        return f"{mode & 0o7777:04o}"
    if isinstance(mode, str):
        s = mode.strip().lower().removeprefix("0o")
        if re.fullmatch(r"[0-7]{1,6}", s):
            return f"{int(s, 8) & 0o7777:04o}"
    return None


def _dev_node(acc: _Access, path: str) -> DevNode:
    st = acc.stat(path)
    if st is None:
        if getattr(acc.reader, "stat", None) is None and acc.exists(path):
            return DevNode(path, True)
        return DevNode(path, False)
    mode = getattr(st, "mode", None)
    is_char = getattr(st, "is_char_device", None)
    if is_char is None:
        kind = getattr(st, "kind", None)
        if isinstance(kind, str):
            is_char = kind == "char"
        elif isinstance(mode, int) and mode > 0o7777:
            is_char = stat_mod.S_ISCHR(mode)
    uid, gid = getattr(st, "uid", None), getattr(st, "gid", None)
    owner, group = getattr(st, "owner", None), getattr(st, "group", None)
    return DevNode(
        path=path,
        exists=True,
        owner=str(owner) if owner not in (None, "") else None,
        group=str(group) if group not in (None, "") else None,
        uid=uid if isinstance(uid, int) else None,
        gid=gid if isinstance(gid, int) else None,
        mode=_mode_str(mode),
        is_char_device=bool(is_char) if is_char is not None else None,
    )


def collect_dev_nodes(reader: StatReader) -> DevNodes:
    """Existence, ownership and mode of /dev/davinci*, davinci_manager, devmm_svm, hisi_hdc."""
    acc = _Access(reader)
    if getattr(reader, "stat", None) is None:
        acc.problems.append("reader cannot stat: ownership and mode of /dev nodes unknown")
    names = [e for e in acc.listdir("/dev") if _DAVINCI_RE.match(e)]
    names.sort(key=lambda e: int(e[len("davinci") :]))
    davinci = tuple(_dev_node(acc, f"/dev/{n}") for n in names)
    control = tuple(_dev_node(acc, p) for p in DEV_CONTROL_NODES)
    return DevNodes(davinci, control, tuple(acc.problems))
