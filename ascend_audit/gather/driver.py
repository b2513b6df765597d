"""Driver-layer gatherers: npu-smi, sysfs PCI / NUMA / NVMe, device nodes, version files, mounts."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.driver_scan import DEV_NODES, HOST_NICS, NPU_SMI, PCI, NpuSmiRun, PciScan
from ascend_audit.facts.sysfs import (
    ASCEND_DEVICE_IDS,
    ASCEND_VF_DEVICE_IDS,
    HUAWEI_VENDOR,
    DevNodes,
    NetInterface,
    PcieLink,
    PciNpu,
    RdmaDevice,
    family_of,
    is_bdf,
    parse_cpulist,
    parse_hex_id,
    parse_int,
    parse_link_speed,
    parse_link_width,
    parse_numa_node,
)
from ascend_audit.facts.users import USER_DB

NPU_SMI_INFO = ("npu-smi", "info")


@gatherer(NPU_SMI, "driver", commands=(NPU_SMI_INFO,))
def npu_smi(ctx: Context) -> NpuSmiRun:
    from ascend_audit.facts.npu_smi import parse_info
    from ascend_audit.facts.npu_smi.messages import parse_messages

    result = ctx.host.run(NPU_SMI_INFO, ctx.policy["driver.npu_smi_timeout"])
    text = result.stdout if result.stdout.strip() else ""
    messages = parse_messages(f"{result.stdout}\n{result.stderr}")
    return NpuSmiRun(result, parse_info(text) if text else None, messages)


@gatherer(PCI, "driver")
def pci(ctx: Context) -> PciScan:
    """Ascend PCI functions, RDMA devices and NICs: through udev when libudev works, else sysfs."""
    from ascend_audit.facts.sysfs import collect_pci_npus

    devices = ctx.host.udev("pci")
    if devices is not None:
        return pci_from_udev(devices, ctx.host.udev("infiniband"), ctx.host.udev("net"))
    return PciScan.of(collect_pci_npus(ctx.host), "sysfs")


@gatherer(DEV_NODES, "driver")
def dev_nodes(ctx: Context) -> DevNodes:
    """The /dev nodes, their owners named by the node's /etc/passwd and /etc/group."""
    from dataclasses import replace

    from ascend_audit.facts.sysfs import collect_dev_nodes

    found = collect_dev_nodes(ctx.host)
    db = ctx.fact(USER_DB)

    def named(n: Any) -> Any:
        return replace(
            n,
            owner=db.user(n.uid) or (str(n.uid) if n.uid is not None and db.users else n.owner),
            group=db.group(n.gid) or (str(n.gid) if n.gid is not None and db.groups else n.group),
        )

    return replace(
        found,
        davinci=tuple(named(n) for n in found.davinci),
        control=tuple(named(n) for n in found.control),
    )


@gatherer(HOST_NICS, "driver")
def host_nics(ctx: Context) -> dict[str, str | None]:
    """Host NICs and their operstate: the pci fact's net interfaces, else /sys/class/net."""
    found: dict[str, str | None] = {}
    try:
        for n in ctx.fact(PCI).net_interfaces:
            found[n.name] = n.operstate
    except Exception:
        pass
    for name in ctx.host.listdir("/sys/class/net") or []:
        if name not in found:
            st = ctx.host.read_text(f"/sys/class/net/{name}/operstate")
            found[name] = (st.text or "").strip() or None
    return found


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """NPUs, versions, topology and storage from whatever driver facts this run gathered."""
    inv: dict[str, Any] = {}
    run = facts.get("npu_smi")
    if run is not None and run.info is not None:
        inv["npus"] = [
            {
                "npu_id": c.npu_id,
                "chip_id": c.chip_id,
                "name": c.name,
                "health": c.health,
                "bus_id": c.bus_id,
                "phy_id": c.phy_id,
                "hbm_total_mb": c.hbm_total_mb,
            }
            for c in run.info.chips
        ]
        if run.info.driver_version:
            inv["versions"] = {"npu_smi_driver": run.info.driver_version}
    return inv


# ---------------------------------------------------------------------------------------------
# the same PciInventory, built from udev answers (dicts of sys_path, sys_name, driver, attributes)

UdevDevice = dict[str, Any]


def _attrs(dev: UdevDevice) -> dict[str, str]:
    raw = dev.get("attributes") if isinstance(dev, dict) else None
    return {str(k): str(v).strip() for k, v in raw.items()} if isinstance(raw, dict) else {}


def _props(dev: UdevDevice) -> dict[str, str]:
    raw = dev.get("properties") if isinstance(dev, dict) else None
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}


def _bdfs_in(sys_path: str) -> list[str]:
    return [p for p in str(sys_path or "").split("/") if is_bdf(p)]


def _udev_link(attrs: dict[str, str]) -> PcieLink:
    cur, mx = attrs.get("current_link_speed"), attrs.get("max_link_speed")
    return PcieLink(
        current_speed=parse_link_speed(cur),
        current_width=parse_link_width(attrs.get("current_link_width")),
        max_speed=parse_link_speed(mx),
        max_width=parse_link_width(attrs.get("max_link_width")),
        current_speed_raw=cur,
        max_speed_raw=mx,
    )


def _ids(dev: UdevDevice) -> tuple[int | None, int | None]:
    attrs, props = _attrs(dev), _props(dev)
    vendor, device = parse_hex_id(attrs.get("vendor")), parse_hex_id(attrs.get("device"))
    if (vendor is None or device is None) and ":" in props.get("PCI_ID", ""):
        v, _, d = props["PCI_ID"].partition(":")
        vendor, device = vendor or parse_hex_id(v), device or parse_hex_id(d)
    return vendor, device


def _hex(value: int | None) -> str | None:
    return None if value is None else f"0x{value:04x}"


def _udev_npu(dev: UdevDevice, by_bdf: dict[str, UdevDevice], vendor: int, device: int) -> PciNpu:
    attrs, props = _attrs(dev), _props(dev)
    bdf = str(dev.get("sys_name") or "")
    notes: list[str] = []
    if vendor != HUAWEI_VENDOR:
        notes.append(f"vendor {_hex(vendor)} is not Huawei (0x19e5); accepted on its device id")
    sub_vendor = parse_hex_id(attrs.get("subsystem_vendor"))
    sub_device = parse_hex_id(attrs.get("subsystem_device"))
    if sub_device is None and ":" in props.get("PCI_SUBSYS_ID", ""):
        sv, _, sd = props["PCI_SUBSYS_ID"].partition(":")
        sub_vendor, sub_device = parse_hex_id(sv), parse_hex_id(sd)
    numa_raw, cpus_raw = attrs.get("numa_node"), attrs.get("local_cpulist")
    cpus = parse_cpulist(cpus_raw)
    if cpus_raw is not None and cpus is None:
        notes.append(f"local_cpulist unparseable: {cpus_raw[:80]!r}")
    if numa_raw is not None and parse_int(numa_raw) is None:
        notes.append(f"numa_node unparseable: {numa_raw[:80]!r}")
    chain = _bdfs_in(str(dev.get("sys_path", "")))
    upstream = chain[-2] if len(chain) >= 2 and chain[-1] == bdf else None
    up = by_bdf.get(upstream or "")
    up_link = _udev_link(_attrs(up)) if up is not None else None
    driver = str(dev.get("driver") or "") or attrs.get("driver") or props.get("DRIVER") or None
    return PciNpu(
        bdf=bdf,
        vendor_id=_hex(vendor),
        device_id=_hex(device),
        family=family_of(device),
        huawei_vendor=vendor == HUAWEI_VENDOR,
        virtual_function=device in ASCEND_VF_DEVICE_IDS or "physfn" in attrs,
        subsystem_vendor=_hex(sub_vendor),
        subsystem_device=_hex(sub_device),
        chips=2 if (device in (0xD500, 0xD501) and sub_device == 0x0110) else 1,
        numa_node=parse_numa_node(numa_raw),
        numa_node_raw=numa_raw,
        local_cpulist=cpus,
        local_cpulist_raw=cpus_raw,
        link=_udev_link(attrs),
        driver=driver,
        upstream_bdf=upstream,
        upstream_link=up_link if up_link is not None and up_link.known else None,
        sysfs_path=str(dev.get("sys_path", "")),
        notes=tuple(notes),
    )


def pci_from_udev(
    pci_devices: list[UdevDevice],
    infiniband: list[UdevDevice] | None = None,
    net: list[UdevDevice] | None = None,
) -> PciScan:
    """Ascend functions, RDMA devices and NICs from udev's pci / infiniband / net answers."""
    problems: list[str] = []
    by_bdf = {
        str(d.get("sys_name")): d
        for d in pci_devices
        if isinstance(d, dict) and is_bdf(str(d.get("sys_name", "")))
    }
    if not by_bdf:
        problems.append("udev lists no PCI functions")
    npus: list[PciNpu] = []
    for bdf in sorted(by_bdf):
        dev = by_bdf[bdf]
        vendor, device = _ids(dev)
        if vendor is None or device is None:
            problems.append(f"{bdf}: vendor/device unreadable in udev attributes")
            continue
        cls = parse_hex_id(_attrs(dev).get("class"))
        if device not in ASCEND_DEVICE_IDS:
            if vendor == HUAWEI_VENDOR and cls is not None and cls >> 16 == 0x12:
                problems.append(f"{bdf}: Huawei accelerator with unknown device id {_hex(device)}")
            continue
        if vendor != HUAWEI_VENDOR and cls is not None and cls >> 16 != 0x12:
            continue
        npus.append(_udev_npu(dev, by_bdf, vendor, device))

    def numa_of(bdf: str | None) -> int | None:
        d = by_bdf.get(bdf or "")
        return parse_numa_node(_attrs(d).get("numa_node")) if d is not None else None

    def parent_of(d: UdevDevice) -> str | None:
        chain = _bdfs_in(str(d.get("sys_path", "")))
        return chain[-1] if chain else None

    nets = [d for d in net or [] if isinstance(d, dict) and parent_of(d)]
    rdma: list[RdmaDevice] = []
    for d in infiniband or []:
        if not isinstance(d, dict):
            continue
        parent = parent_of(d)
        link = _udev_link(_attrs(by_bdf[parent])) if parent in by_bdf else None
        rdma.append(
            RdmaDevice(
                name=str(d.get("sys_name", "")),
                pci_bdf=parent,
                numa_node=numa_of(parent),
                netdevs=tuple(str(n.get("sys_name")) for n in nets if parent_of(n) == parent),
                link=link if link is not None and link.known else None,
                sysfs_path=str(d.get("sys_path", "")),
            )
        )
    interfaces = [
        NetInterface(
            name=str(n.get("sys_name", "")),
            pci_bdf=parent_of(n),
            numa_node=numa_of(parent_of(n)),
            operstate=_attrs(n).get("operstate"),
            speed_mbps=_positive(parse_int(_attrs(n).get("speed"))),
            mtu=parse_int(_attrs(n).get("mtu")),
            rdma_devices=tuple(r.name for r in rdma if r.pci_bdf and r.pci_bdf == parent_of(n)),
            sysfs_path=str(n.get("sys_path", "")),
        )
        for n in nets
    ]
    return PciScan(tuple(npus), tuple(rdma), tuple(interfaces), tuple(problems), "udev")


def _positive(value: int | None) -> int | None:
    return value if value is not None and value > 0 else None


def __getattr__(name: str) -> Any:
    """Names that moved to checks/ (issue 15); kept for branches of this round, then removed."""
    if name in ("NO_NPU", "no_npu_at_all"):
        from ascend_audit.checks.driver import npu_absent

        return getattr(npu_absent, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
